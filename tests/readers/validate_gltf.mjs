// Validates a .glb file with the Khronos glTF validator (npm gltf-validator, offline) and prints its
// report as JSON on stdout; exit 0 when the report has no error, 1 otherwise, 2 on bad usage.
// Usage: node validate_gltf.mjs FILE.glb   (run from the repository, where node_modules is)
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const validator = require("gltf-validator");

const file = process.argv[2];
if (!file) {
  console.error("usage: node validate_gltf.mjs FILE.glb");
  process.exit(2);
}
const report = await validator.validateBytes(new Uint8Array(readFileSync(file)), { maxIssues: 100 });
console.log(JSON.stringify(report));
process.exit(report.issues.numErrors === 0 ? 0 : 1);
