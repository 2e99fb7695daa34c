// Volume of a closed triangle mesh, C = V - pressure V0 (Mueller et al. 2007, sec. 4.4), with
// V = sum over triangles of x_a.(x_b x x_c)/6. Each vertex's gradient sums (x_b x x_c)/6 over its
// triangles; the constraint couples every vertex of the mesh, so it is projected as a whole.
#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {

// Fills gradient[0 .. vertexCount) (local vertices) and returns the enclosed volume.
double meshVolumeAndGradient(const Model& model, const GlobalVolumeConstraint& con, const Vec3* x, Vec3* gradient) {
  const ParticleIndex* vertices = model.volumeVertices.data() + con.firstVertex;
  for (std::uint32_t v = 0; v < con.vertexCount; ++v) gradient[v].setZero();
  double sixVolume = 0.0;
  for (std::uint32_t t = con.firstTriangle; t < con.firstTriangle + con.triangleCount; ++t) {
    const auto& tri = model.volumeTriangles[t];
    const Vec3& a = x[vertices[tri[0]]];
    const Vec3& b = x[vertices[tri[1]]];
    const Vec3& c = x[vertices[tri[2]]];
    const Vec3 bc = b.cross(c);
    sixVolume += a.dot(bc);
    gradient[tri[0]] += bc;
    gradient[tri[1]] += c.cross(a);
    gradient[tri[2]] += a.cross(b);
  }
  for (std::uint32_t v = 0; v < con.vertexCount; ++v) gradient[v] /= 6.0;
  return sixVolume / 6.0;
}

}  // namespace

void projectGlobalVolume(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  Vec3* gradient = ctx.scratch->data();
  for (std::uint32_t c = begin; c < end; ++c) {
    const GlobalVolumeConstraint& con = model.globalVolumes[c];
    const ParticleIndex* vertices = model.volumeVertices.data() + con.firstVertex;
    const double volume = meshVolumeAndGradient(model, con, x, gradient);
    double wSum = 0.0;
    for (std::uint32_t v = 0; v < con.vertexCount; ++v) wSum += w[vertices[v]] * gradient[v].squaredNorm();
    if (!(wSum > 1e-300)) continue;
    const double dLambda =
        solveMultiplier(volume - con.pressure * con.restVolume, wSum, static_cast<int>(con.vertexCount), gradient,
                        vertices, con.params, ctx.lambda[c], false, ctx);
    for (std::uint32_t v = 0; v < con.vertexCount; ++v) x[vertices[v]] += (w[vertices[v]] * dLambda) * gradient[v];
  }
}

double evaluateGlobalVolume(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                            std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const GlobalVolumeConstraint& con = model.globalVolumes[i];
  const ParticleIndex* vertices = model.volumeVertices.data() + con.firstVertex;
  particles.assign(vertices, vertices + con.vertexCount);
  gradient.resize(con.vertexCount);
  return meshVolumeAndGradient(model, con, x, gradient.data()) - con.pressure * con.restVolume;
}

double closedMeshVolume(const Model& model, std::uint32_t i, const Vec3* x) {
  std::vector<Vec3> gradient(model.globalVolumes[i].vertexCount);
  return meshVolumeAndGradient(model, model.globalVolumes[i], x, gradient.data());
}

namespace {
void validateGlobalVolumes(const Model& model) {
  for (std::size_t i = 0; i < model.globalVolumes.size(); ++i) {
    const auto& c = model.globalVolumes[i];
    const std::string where = describe("global volume constraint", i);
    checkParameters(c.params, where);
    if (c.firstTriangle + std::size_t(c.triangleCount) > model.volumeTriangles.size() ||
        c.firstVertex + std::size_t(c.vertexCount) > model.volumeVertices.size())
      throw Error(where + ": triangle or vertex range out of bounds");
    for (std::uint32_t t = c.firstTriangle; t < c.firstTriangle + c.triangleCount; ++t)
      for (std::uint32_t v : model.volumeTriangles[t])
        if (v >= c.vertexCount) throw Error(where + ": triangle " + std::to_string(t) + " vertex out of range");
    for (std::uint32_t v = 0; v < c.vertexCount; ++v)
      checkIndex(model.volumeVertices[c.firstVertex + v], model.particleCount(), where);
    if (!std::isfinite(c.pressure) || c.pressure < 0.0) throw Error(where + ": pressure must be >= 0");
  }
}
}  // namespace

const FamilyKernels kGlobalVolumeKernels = {projectGlobalVolume, projectGlobalVolume,  evaluateGlobalVolume, nullptr,
                                            neverUnilateral,     validateGlobalVolumes};

}  // namespace pliant::detail
