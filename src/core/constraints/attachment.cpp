// Attachment of a particle to a point in space: C = |x - target| - d. The target is not a particle
// (it has infinite mass), so only the particle's inverse mass enters the denominator.
#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {
constexpr double kMinLength = 1e-12;  // m
}

void projectAttachment(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  Vec3* x = ctx.x;
  for (std::uint32_t c = begin; c < end; ++c) {
    const AttachmentConstraint& con = model.attachments[c];
    const ParticleIndex p = con.particle;
    const Vec3 delta = x[p] - ctx.attachmentTarget[c];
    const double length = delta.norm();
    if (length < kMinLength) continue;
    const Vec3 n = delta / length;
    const double dLambda = solveMultiplier(length - con.restDistance, ctx.w[p], 1, &n, &con.particle, con.params,
                                           ctx.lambda[c], false, ctx);
    moveParticle(x, p, ctx.w[p], (ctx.w[p] * dLambda) * n);
  }
}

double evaluateAttachment(const Model& model, const Vec3* x, const Vec3* targets, std::uint32_t i,
                          std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const AttachmentConstraint& con = model.attachments[i];
  particles.assign(1, con.particle);
  const Vec3 delta = x[con.particle] - targets[i];
  const double length = delta.norm();
  gradient.assign(1, length >= kMinLength ? Vec3(delta / length) : Vec3::Zero());
  return length - con.restDistance;
}

namespace {
void validateAttachments(const Model& model) {
  for (std::size_t i = 0; i < model.attachments.size(); ++i) {
    const auto& c = model.attachments[i];
    const std::string where = describe("attachment", i);
    checkIndex(c.particle, model.particleCount(), where);
    checkParameters(c.params, where);
    checkFinite(c.target, where + " target");
    checkLength(c.restDistance, where, "rest distance");
    if (c.targetPath >= static_cast<std::int64_t>(model.attachmentPaths.size()))
      throw Error(where + ": target path " + std::to_string(c.targetPath) + " does not exist");
  }
}
int attachmentParticles(const Model& model, std::uint32_t i, ParticleIndex* out) {
  out[0] = model.attachments[i].particle;
  return 1;
}
}  // namespace

const FamilyKernels kAttachmentKernels = {projectAttachment,   projectAttachment, evaluateAttachment,
                                          attachmentParticles, neverUnilateral,   validateAttachments};

}  // namespace pliant::detail
