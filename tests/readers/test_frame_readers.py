"""Every frame format read back by third-party readers from Debian, as a ParaView, Blender or
meshio user would: VTK 9.1's Python readers (python3-vtk9), meshio (python3-meshio) and assimp's
command line (assimp-utils). ctest runs this file with PLIANT_CLI at the pliant executable
(tests/CMakeLists.txt); the readers are required, not optional: a missing one fails the test."""

import math
import os
import pathlib
import re
import subprocess
import xml.etree.ElementTree as ET

import meshio
import numpy as np
import pytest
import vtk
from vtk.util.numpy_support import vtk_to_numpy

CLI = os.environ.get("PLIANT_CLI", "")

# two-cloths: objects "lower" and "upper" (20 x 20 nodes each), a ground plane and a sphere of
# radius 0.3 m at (0, 0.3, 0); 60 frames per second.
NODES = 400
TRIANGLES = 2 * 19 * 19
PARTS = ["lower", "upper", "plane_0", "sphere_1"]
FRAMES = 3


def run(tmp, *arguments):
    out = tmp / "out"
    result = subprocess.run([CLI, "run", *arguments, "--out", str(out), "--quiet"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


def final_state(out):
    """Positions (m) and velocities (m/s) of final_state.csv as float32, as the frames store them."""
    rows = np.loadtxt(out / "final_state.csv", delimiter=",", skiprows=1)
    return rows[:, 1:4].astype(np.float32), rows[:, 4:7].astype(np.float32)


def pvd_entries(out):
    root = ET.parse(out / "scene.pvd").getroot()
    return [(float(d.get("timestep")), d.get("file")) for d in root.iter("DataSet")]


def read_vtm(path):
    reader = vtk.vtkXMLMultiBlockDataReader()
    reader.SetFileName(str(path))
    reader.Update()
    blocks = reader.GetOutput()
    names = [blocks.GetMetaData(i).Get(vtk.vtkCompositeDataSet.NAME()) for i in range(blocks.GetNumberOfBlocks())]
    return names, [blocks.GetBlock(i) for i in range(blocks.GetNumberOfBlocks())]


def field_time(grid):
    return grid.GetFieldData().GetArray("TIME").GetValue(0)


def assimp_meshes(path):
    """`assimp info`'s mesh table: [(name, vertices, faces, primitive types)]."""
    result = subprocess.run(["assimp", "info", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return [
        (m.group(2), int(m.group(3)), int(m.group(4)), m.group(5))
        for m in re.finditer(r"^\s+(\d+) \(([^)]*)\): \[(\d+) / \d+ / (\d+) \| ([a-z ]+)\]", result.stdout, re.M)
    ]


@pytest.fixture(scope="module")
def vtk_run(tmp_path_factory):
    return run(tmp_path_factory.mktemp("vtk"), "two-cloths", "--frames", str(FRAMES))


def test_vtk_frames_are_named_multiblocks_with_times_and_values(vtk_run):
    entries = pvd_entries(vtk_run)
    assert [t for t, _ in entries] == pytest.approx([k / 60 for k in range(FRAMES + 1)], abs=1e-12)
    for time, file in entries:
        assert file.endswith(".vtm")
        names, blocks = read_vtm(vtk_run / file)
        assert names == PARTS
        for name, grid in zip(names, blocks):
            assert field_time(grid) == pytest.approx(time, abs=1e-12)
            if name in ("lower", "upper"):
                assert grid.GetNumberOfPoints() == NODES
                assert grid.GetNumberOfCells() == TRIANGLES
                assert grid.GetPointData().GetArray("velocity").GetNumberOfComponents() == 3
    # The last frame's points and velocities are the final state's, objects in particle order.
    _, blocks = read_vtm(vtk_run / entries[-1][1])
    x, v = final_state(vtk_run)
    points = np.vstack([vtk_to_numpy(b.GetPoints().GetData()) for b in blocks[:2]])
    velocity = np.vstack([vtk_to_numpy(b.GetPointData().GetArray("velocity")) for b in blocks[:2]])
    np.testing.assert_array_equal(points, x)
    np.testing.assert_array_equal(velocity, v)
    speed = np.concatenate([vtk_to_numpy(b.GetPointData().GetArray("speed")) for b in blocks[:2]])
    np.testing.assert_allclose(speed, np.linalg.norm(v, axis=1), rtol=1e-6)


def test_vtk_collider_parts_are_the_colliders_surfaces(vtk_run):
    _, blocks = read_vtm(vtk_run / pvd_entries(vtk_run)[-1][1])
    plane = vtk_to_numpy(blocks[2].GetPoints().GetData())
    assert plane.shape == (4, 3) and blocks[2].GetNumberOfCells() == 2
    np.testing.assert_array_equal(plane[:, 1], 0.0)  # the ground y = 0
    assert np.ptp(plane[:, 0]) > 2.0 and np.ptp(plane[:, 2]) > 2.0  # wider than the cloths
    sphere = vtk_to_numpy(blocks[3].GetPoints().GetData()).astype(np.float64)
    np.testing.assert_allclose(np.linalg.norm(sphere - [0.0, 0.3, 0.0], axis=1), 0.3, rtol=1e-6)
    # A closed surface: every edge in two triangles.
    cells = vtk_to_numpy(blocks[3].GetCells().GetConnectivityArray()).reshape(-1, 3)
    edges = {}
    for a, b, c in cells:
        for e in ((a, b), (b, c), (c, a)):
            edges[tuple(sorted(e))] = edges.get(tuple(sorted(e)), 0) + 1
    assert set(edges.values()) == {2}


def test_vtu_is_zlib_compressed_and_the_raw_option_reads_the_same(vtk_run, tmp_path):
    names, _ = read_vtm(vtk_run / "frames/frame_000000.vtm")
    first = (vtk_run / "frames/frame_000000_lower.vtu").read_bytes()
    assert b'compressor="vtkZLibDataCompressor"' in first
    raw = run(tmp_path, "two-cloths", "--frames", str(FRAMES), "--uncompressed")
    assert b"compressor" not in (raw / "frames/frame_000000_lower.vtu").read_bytes()
    for name in ["lower", "upper", "plane_0", "sphere_1"]:
        a = meshio.read(vtk_run / f"frames/frame_{FRAMES:06d}_{name}.vtu")
        b = meshio.read(raw / f"frames/frame_{FRAMES:06d}_{name}.vtu")
        np.testing.assert_array_equal(a.points, b.points)
        for key in b.point_data:
            np.testing.assert_array_equal(a.point_data[key], b.point_data[key])
    # summary.json reports the frame files' total size, smaller compressed.
    import json

    compressed = json.loads((vtk_run / "summary.json").read_text())["outputs"]
    uncompressed = json.loads((raw / "summary.json").read_text())["outputs"]
    on_disk = sum(f.stat().st_size for f in (vtk_run / "frames").iterdir()) + (vtk_run / "scene.pvd").stat().st_size
    assert compressed["frame_bytes"] == on_disk
    assert compressed["parts"] == PARTS
    assert compressed["frame_bytes"] < 0.8 * uncompressed["frame_bytes"]


def test_meshio_reads_every_vtu_part(vtk_run):
    x, _ = final_state(vtk_run)
    lower = meshio.read(vtk_run / f"frames/frame_{FRAMES:06d}_lower.vtu")
    assert lower.points.shape == (NODES, 3)
    assert lower.cells_dict["triangle"].shape == (TRIANGLES, 3)
    np.testing.assert_array_equal(lower.points, x[:NODES])
    assert meshio.read(vtk_run / f"frames/frame_{FRAMES:06d}_sphere_1.vtu").points.shape[0] > 100


def test_obj_frames_have_named_objects_normals_and_uvs(tmp_path):
    out = run(tmp_path, "two-cloths", "--frames", "1", "--format", "obj")
    frame = out / "frames/frame_000001.obj"
    meshes = assimp_meshes(frame)
    assert [m[0] for m in meshes] == PARTS
    assert meshes[0][1:] == (NODES, TRIANGLES, "triangle")
    text = frame.read_text()
    # One vt and one vn per vertex (meshio needs the counts equal): the grid cloths' UVs, (0, 0) for
    # the colliders.
    assert text.count("\nvt ") == text.count("\nv ") and text.count("\nvn ") == text.count("\nv ")
    # The grid's UVs: node (i, j) at (i / 19, j / 19); the last vertex of "lower" at (1, 1).
    lines = text.splitlines()
    vt = [list(map(float, l.split()[1:])) for l in lines if l.startswith("vt ")]
    assert vt[0] == [0.0, 0.0] and vt[NODES - 1] == [1.0, 1.0] and vt[1] == pytest.approx([1 / 19, 0.0])
    # Normals: unit length; the flat "lower" cloth at frame 1 faces +y or -y.
    vn = np.array([list(map(float, l.split()[1:])) for l in lines if l.startswith("vn ")])
    np.testing.assert_allclose(np.linalg.norm(vn, axis=1), 1.0, rtol=1e-6)
    assert np.all(np.abs(vn[:NODES, 1]) > 0.99)
    # meshio reads the points of the whole file, with the UVs and normals as point data.
    m = meshio.read(frame)
    assert m.points.shape[0] == text.count("\nv ")
    np.testing.assert_array_equal(m.point_data["obj:vt"][:NODES], np.array(vt[:NODES]))


def test_rope_is_a_polyline_in_obj_and_vtk_and_points_in_ply(tmp_path):
    obj = run(tmp_path / "obj", "rope", "--frames", "1", "--format", "obj")
    meshes = assimp_meshes(obj / "frames/frame_000001.obj")
    assert meshes == [("", 41, 40, "line")] or [m[1:] for m in meshes] == [(41, 40, "line")]
    assert (obj / "frames/frame_000001.obj").read_text().count("\nl ") == 1  # one chain
    vtu = run(tmp_path / "vtk", "rope", "--frames", "1")
    rope = meshio.read(vtu / "frames/frame_000001.vtu")
    assert rope.points.shape == (41, 3) and rope.cells_dict["line"].shape == (40, 2)
    ply = run(tmp_path / "ply", "rope", "--frames", "1", "--format", "ply")
    points = meshio.read(ply / "frames/frame_000001.ply")
    assert points.points.shape == (41, 3)


def test_ply_has_one_file_per_part_that_meshio_and_assimp_read(tmp_path):
    out = run(tmp_path, "two-cloths", "--frames", "1", "--format", "ply")
    x, v = final_state(out)
    files = sorted(p.name for p in (out / "frames").iterdir())
    assert files == sorted(f"frame_{k:06d}_{name}.ply" for k in (0, 1) for name in PARTS)
    lower = meshio.read(out / "frames/frame_000001_lower.ply")
    np.testing.assert_array_equal(lower.points, x[:NODES])
    np.testing.assert_array_equal(np.column_stack([lower.point_data[k] for k in ("vx", "vy", "vz")]), v[:NODES])
    assert lower.cells_dict["triangle"].shape == (TRIANGLES, 3)
    for name in PARTS:
        meshes = assimp_meshes(out / f"frames/frame_000001_{name}.ply")
        assert len(meshes) == 1 and meshes[0][3] == "triangle"


def test_single_object_without_colliders_keeps_one_file_per_frame(tmp_path):
    out = run(tmp_path, "cloth", "--frames", "1")
    assert [f for _, f in pvd_entries(out)] == ["frames/frame_000000.vtu", "frames/frame_000001.vtu"]
    reader = vtk.vtkXMLUnstructuredGridReader()
    reader.SetFileName(str(out / "frames/frame_000001.vtu"))
    reader.Update()
    assert reader.GetOutput().GetNumberOfPoints() == 48 * 48
    assert field_time(reader.GetOutput()) == pytest.approx(1 / 60, abs=1e-12)


def glb_chunks(path):
    """The JSON and BIN chunks of a .glb file (glTF 2.0 binary container)."""
    data = path.read_bytes()
    magic, version, length = np.frombuffer(data[:12], "<u4")
    assert (magic, version, length) == (0x46546C67, 2, len(data))
    json_length = int(np.frombuffer(data[12:16], "<u4")[0])
    import json

    document = json.loads(data[20 : 20 + json_length])
    bin_start = 20 + json_length + 8
    return document, data[bin_start:]


def accessor(document, binary, index):
    a = document["accessors"][index]
    view = document["bufferViews"][a["bufferView"]]
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[a["type"]]
    dtype = {5126: "<f4", 5125: "<u4"}[a["componentType"]]
    start = view["byteOffset"] + a.get("byteOffset", 0)
    return np.frombuffer(binary, dtype, a["count"] * width, start).reshape(a["count"], width)


def test_glb_is_one_animated_file_that_assimp_and_the_khronos_validator_read(tmp_path):
    out = run(tmp_path, "two-cloths", "--frames", str(FRAMES), "--format", "glb")
    glb = out / "scene.glb"
    assert not (out / "frames").exists()  # no per-frame files
    meshes = assimp_meshes(glb)
    assert [m[0] for m in meshes] == PARTS
    assert meshes[0][1:] == (NODES, TRIANGLES, "triangle")
    info = subprocess.run(["assimp", "info", str(glb)], capture_output=True, text=True).stdout
    assert re.search(r"^Animations:\s+1$", info, re.M), info
    # The Khronos validator (npm gltf-validator, in node_modules): no errors.
    root = pathlib.Path(os.environ.get("PLIANT_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
    node = os.environ.get("PLIANT_NODE") or "node"
    assert (root / "node_modules/gltf-validator").is_dir(), "run `npm ci` for the Khronos glTF validator"
    check = subprocess.run(
        [node, str(root / "tests/readers/validate_gltf.mjs"), str(glb)], capture_output=True, text=True, cwd=root
    )
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
    # Values: the last frame is the base plus the last morph target, equal to the final state;
    # the weights animation has one key per frame at the frames' times.
    document, binary = glb_chunks(glb)
    x, _ = final_state(out)
    for i, name in enumerate(["lower", "upper"]):
        primitive = document["meshes"][i]["primitives"][0]
        assert document["meshes"][i]["name"] == name and len(primitive["targets"]) == FRAMES
        base = accessor(document, binary, primitive["attributes"]["POSITION"])
        last = accessor(document, binary, primitive["targets"][-1]["POSITION"])
        np.testing.assert_allclose(base + last, x[i * NODES : (i + 1) * NODES], atol=1e-6)
        uv = accessor(document, binary, primitive["attributes"]["TEXCOORD_0"])
        assert uv[0].tolist() == [0.0, 0.0] and uv[NODES - 1].tolist() == [1.0, 1.0]
    animation = document["animations"][0]
    times = accessor(document, binary, animation["samplers"][0]["input"]).ravel()
    np.testing.assert_allclose(times, [k / 60 for k in range(FRAMES + 1)], rtol=1e-6)
    weights = accessor(document, binary, animation["samplers"][0]["output"]).reshape(FRAMES + 1, FRAMES)
    np.testing.assert_array_equal(weights, np.vstack([np.zeros(FRAMES), np.eye(FRAMES)]))
    # The sphere: a rigid node at its centre, its mesh in its own frame.
    sphere = document["nodes"][3]
    assert sphere["name"] == "sphere_1" and sphere["translation"] == pytest.approx([0.0, 0.3, 0.0])


def test_a_cloth_read_from_an_obj_keeps_its_uvs(tmp_path):
    # A 2 x 1 strip of two quads whose vt lines run backwards along u: the frames carry them.
    (tmp_path / "strip.obj").write_text(
        "v 0 1 0\nv 1 1 0\nv 2 1 0\nv 0 1 1\nv 1 1 1\nv 2 1 1\n"
        "vt 1 0\nvt 0.5 0\nvt 0 0\nvt 1 1\nvt 0.5 1\nvt 0 1\n"
        "f 1/1 4/4 5/5 2/2\nf 2/2 5/5 6/6 3/3\n"
    )
    (tmp_path / "scene.json").write_text(
        '{"name": "strip", "frames": 1, "objects": [{"type": "cloth", "name": "strip", "mesh": "strip.obj", "mass": 0.1}]}'
    )
    out = run(tmp_path, str(tmp_path / "scene.json"), "--format", "obj")
    lines = (out / "frames/frame_000001.obj").read_text().splitlines()
    vt = [list(map(float, l.split()[1:])) for l in lines if l.startswith("vt ")]
    assert vt == [[1, 0], [0.5, 0], [0, 0], [1, 1], [0.5, 1], [0, 1]]
    assert assimp_meshes(out / "frames/frame_000001.obj")[0][1:] == (6, 4, "triangle")


def test_rigid_bodies_are_named_parts_posed_as_final_bodies_csv(tmp_path):
    """hinge-chain: ten boxes, each a block named after it whose corners are the box posed by the
    body's final pose in final_bodies.csv (centre of mass and quaternion); assimp reads the glb's
    ten nodes."""
    out = run(tmp_path, "hinge-chain", "--frames", str(FRAMES))
    names, blocks = read_vtm(out / f"frames/frame_{FRAMES:06d}.vtm")
    assert names == [f"link_{k}" for k in range(10)]
    rows = np.genfromtxt(out / "final_bodies.csv", delimiter=",", skip_header=1, dtype=None, encoding="utf-8")
    half = np.array([0.1, 0.02, 0.02])
    for block, row in zip(blocks, rows):
        points = vtk_to_numpy(block.GetPoints().GetData()).astype(np.float64)
        assert points.shape == (24, 3)  # 6 faces of 4 corners
        centre = np.array([row[2], row[3], row[4]])
        w, x, y, z = row[5], row[6], row[7], row[8]
        rotation = np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ])
        local = (points - centre) @ rotation  # back into the body frame
        assert np.allclose(np.abs(local), half, atol=1e-5)
    # glb: a node per body (assimp shares the ten identical box meshes as one).
    out = run(tmp_path / "glb", "hinge-chain", "--frames", str(FRAMES), "--format", "glb")
    info = subprocess.run(["assimp", "info", str(out / "scene.glb")], capture_output=True, text=True).stdout
    assert re.findall(r"(link_\d) \(mesh", info) == [f"link_{k}" for k in range(10)]
