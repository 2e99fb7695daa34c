// Surface contact: cloth self-collision and cloth-cloth collision. Stages 3 (collide), 5 (project,
// between particle pairs and colliders) and 7 (velocity pass) of the step pipeline in solver.h.
//
// The idea (seed 004: collisions are constraints C >= 0; Bridson et al. 2002, "Robust treatment of
// collisions, contact and friction for cloth animation", for the two proximity kinds):
// - Two surfaces meet either where a vertex comes near a triangle or where an edge comes near an
//   edge; every other way of meeting passes through one of these first. For every vertex of a
//   collision triangle against every collision triangle it is not a corner of, and every edge
//   against every edge it shares no vertex with, the gap along the contact normal must stay at
//   least the thickness. Each such pair is one linear constraint over four particles,
//   C = n . (sum_k c_k x_k) - thickness >= 0 (the vertex minus its closest point on the triangle,
//   or the closest point of one edge minus that of the other), with n and c_k frozen when the
//   contact is made: a substep is short, so the geometry barely turns within it, and a frozen
//   linear constraint has exact gradients. The c_k sum to zero, so momentum is conserved.
// - Continuous collision. A pair is tested on the straight path of all four particles from x^n
//   (the start of the substep) to the prediction. The side is the one the pair came from: the
//   normal points from the triangle (edge b) to where the vertex (edge a) was, so a vertex predicted
//   beyond the triangle is pushed back to the side it came from, never through. First a linear
//   estimate: the signed distance from the plane at x^n and from the plane at the prediction,
//   taken to change linearly in between; exact for a triangle (edge pair) that translates. When
//   it crosses zero the closest points are taken there, so a fast vertex passing beside a triangle
//   makes no contact and one passing through it does; when it ends within the reach, at the
//   prediction. Only pairs whose closest points lie over the triangle (within the edges) count:
//   the other configurations are another pair's (a vertex near a triangle's edge is that edge's
//   business). Where the estimate finds no contact, or cannot judge (the normal turned by more
//   than 90 degrees), the cubic coplanarity test of Bridson et al. 2002 (ccd.h) decides: a
//   triangle that turns or deforms through a vertex within the substep, even one that ends on the
//   side it started, is found at the time they meet, and the contact takes its normal and weights
//   there. docs/scene-format.md states what is guaranteed.
// - Broad phase once per step, narrow phase per substep. At the first substep, each particle is
//   given a box that holds its path for the whole step as predicted from x^n, its velocity and
//   gravity (and its path, if kinematic), padded by half the thickness and a part of its travel for
//   the corrections the solver will make. The boxes are drawn in a frame that moves with the
//   surface's mean velocity and falls with gravity while the surface moves as a whole (a falling
//   cloth keeps small boxes) and stays otherwise (a resting one keeps its boxes); substep boxes
//   overlap in the world exactly when they overlap shifted by the frame's offset in that substep.
//   Vertex and triangle boxes (edge and edge boxes) are compared by descending two box hierarchies
//   at once (box_tree.h); pairs whose boxes come within the reach (below) are the step's
//   candidates, sorted. A pair left out is at least that far apart for as long as each particle
//   stays in its box, because boxes are convex. Each later substep checks that every particle's
//   x^n and prediction, shifted by the frame's offset, are still inside its box and runs the broad
//   phase again (over the rest of the step) if one is not, so skipping it is never a guess.
//   When only a few particles left their boxes (at most one in kLocalUpdateShare), the frame stays
//   and every skipped patch's cone holds, the broad phase is updated locally instead
//   (updateCandidates): those particles get new boxes, and so do their triangles and edges; only
//   the pairs of these are searched again, from their triangles, and the new ones are added to
//   the candidates. The other pairs' boxes did not change, so their candidates stand, and the
//   candidates are again every pair whose boxes overlap (with some that no longer do, which the
//   substep box test rejects). A resting cloth, where a particle or two creep out of their boxes
//   every few substeps, no longer runs over every triangle for them. The contacts come in the
//   candidates' order whichever list holds them, so they are those of a run.
//   Each substep box-tests the candidates with boxes of the particles' paths in that substep; while
//   the surface moves little, only those whose boxes came within a gap when a near list was drawn,
//   for as long as no particle's box has moved half that gap since (collide), which is exact too.
// - Patches that cannot touch themselves are skipped (Volino and Magnenat-Thalmann 1994,
//   "Efficient self-collision detection on smoothly discretized surface animations using
//   geometrical shape regularity", sec. 3; Provot 1997). The search descends one hierarchy, over the
//   triangles, against itself; a vertex (edge) is searched from one triangle it belongs to. A node
//   is skipped, with the pairs among its own triangles, vertices and edges (not those with the rest),
//   when (a) its triangles form a topological disk in the mesh (edge-connected, no edge in three,
//   V - E + F = 1; fixed, found once) and (b) some axis has a positive dot product with every
//   triangle's normal over the whole substep: n(t) of a triangle whose corners move on lines is a
//   quadratic, and its three Bernstein coefficients must all lie within 75 degrees of the cone's
//   axis when the node is skipped and within 90 degrees in every later substep that uses these
//   candidates (checked exactly; a failure runs the broad phase again, like a particle leaving its
//   box). Such a patch is a height field over the plane normal to the axis at every moment of the
//   substep, so it cannot pass through itself, provided (c) its boundary, projected on that plane,
//   does not cross itself: (c) is not checked. For a disk of a cloth that would take an in-plane
//   distortion that brings two parts of its boundary over each other (a patch coiled like a ramp);
//   the hierarchy's nodes are compact pieces of the rest layout. What skipping gives up: contacts
//   between parts of one such patch that come within the thickness without crossing (a crease
//   folded to nearly 90 degrees on each side).
// - Friction and the velocity pass are those of the other contacts (friction.h), on the relative
//   motion sum_k c_k x_k, shared out by c_k w_k / sum_k c_k^2 w_k.
#include "collision/surface_contacts.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <utility>

#include "collision/ccd.h"
#include "collision/closest_on_triangle.h"
#include "collision/counting_sort.h"
#include "collision/friction.h"
#include "constraints/avx2_lanes.h"
#include "step_check.h"

namespace pliant::detail {

namespace {

// Closest point to p on triangle (a, b, c), as barycentric weights (inlined, as closestOnTriangle).
[[gnu::always_inline]] inline Vec3 closestBarycentric(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  return triangleWeights(closestOnTriangle(p, a, b, c));
}

Vec3 lerp(const Vec3& a, const Vec3& b, double t) { return a + t * (b - a); }

// sortPairs sorts by comparison below one pair per this many keys.
constexpr std::size_t kFewPairsPerKey = 8;

// Gathers the pairs of the first `count` lists (distinct pairs; first(pair) below `firstKeys`,
// second(pair) below `secondKeys`) into `out`, sorted by (first, second): a counting sort by the
// second into `scratch`, then a stable counting sort by the first (least significant key first;
// buckets of one vertex or edge hold dozens of pairs in a folded cloth, too many to sort each in
// place). The order depends only on the pairs, not on which list held them, so any split of the
// search over threads gives the same list. Called by every thread of a parallel region (a team of
// any size, at most `count`), with `out` and `scratch` sized to the pairs, `totals` to the team
// and `place` to count * max(firstKeys, secondKeys) entries: the threads count and place the pairs
// of their lists (round robin), then of their fixed shares of `scratch`, in order, and turn the
// counts into starts over fixed shares of the buckets, so the list is the same for any team.
template <class T, class First, class Second>
void sortPairs(const std::vector<ThreadOwned<std::vector<T>>>& lists, int count, std::size_t firstKeys,
               std::size_t secondKeys, std::uint32_t* totals, std::uint32_t* place, std::vector<T>& scratch,
               std::vector<T>& out, First first, Second second) {
  const auto team = static_cast<std::size_t>(omp_get_num_threads());
  const auto thread = static_cast<std::size_t>(omp_get_thread_num());
  const auto listCount = static_cast<std::size_t>(count);
  // Few pairs for many keys (a cloth that barely meets itself): the counting passes would cost a
  // pass over the keys each; one thread sorts them by comparison instead.
  if (out.size() * kFewPairsPerKey < firstKeys + secondKeys) {
#pragma omp single
    {
      std::size_t next = 0;
      for (std::size_t l = 0; l < listCount; ++l)
        for (const T& pair : lists[l]) out[next++] = pair;
      std::sort(out.begin(), out.end(), [&](const T& a, const T& b) {
        return first(a) != first(b) ? first(a) < first(b) : second(a) < second(b);
      });
    }
    return;  // the single's barrier
  }
  // 1. By the second: place[l * secondKeys + k] counts list l's pairs in bucket k, then holds
  //    where the next of them goes (bucket by bucket, lists in order within a bucket).
  for (std::size_t l = thread; l < listCount; l += team) {
    std::uint32_t* counts = place + l * secondKeys;
    std::fill(counts, counts + secondKeys, 0u);
    for (const T& pair : lists[l]) ++counts[second(pair)];
  }
#pragma omp barrier
  partCountsToStartsShared(place, listCount, secondKeys, totals);
  for (std::size_t l = thread; l < listCount; l += team) {
    std::uint32_t* next = place + l * secondKeys;
    for (const T& pair : lists[l]) scratch[next[second(pair)]++] = pair;
  }
#pragma omp barrier
  // 2. By the first, stably: each thread takes a fixed share of `scratch`, the shares in order.
  const std::size_t pairs = out.size();
  const std::size_t begin = pairs * thread / team, end = pairs * (thread + 1) / team;
  std::uint32_t* counts = place + thread * firstKeys;
  std::fill(counts, counts + firstKeys, 0u);
  for (std::size_t i = begin; i < end; ++i) ++counts[first(scratch[i])];
#pragma omp barrier
  partCountsToStartsShared(place, team, firstKeys, totals);
  for (std::size_t i = begin; i < end; ++i) out[counts[first(scratch[i])]++] = scratch[i];
#pragma omp barrier
}

// How near a pair must come to be made a contact (m): the thickness plus a margin, so that a pair
// pushed together by other constraints during the projection is still held. The margin is
// SolverSettings::contactMargin capped at a quarter of the thickness: the reach must stay below
// the distance between non-adjacent vertices and triangles of a flat mesh (about 0.7 of an edge),
// or every neighbour in the mesh becomes a pair to test in every substep.
double surfaceReach(const Model& model, const SolverSettings& settings) {
  return model.surfaceThickness + std::min(settings.contactMargin, 0.25 * model.surfaceThickness);
}

// Below this many surface particles the broad phase runs on one thread.
constexpr std::size_t kParallelQueries = 2048;

// A slot's bit in the neighbour filters (Fibonacci hashing: slots a mesh row apart land on
// different bits).
int filterBit(std::uint32_t slot) { return static_cast<int>((slot * 0x9E3779B97F4A7C15ull) >> 58); }

// Aabb::overlaps without a branch per comparison (the same answer, NaN included).
// The comparisons are ints so that `&` is meant (and clang's -Wbitwise-instead-of-logical agrees).
bool overlapping(const Aabb& a, const Aabb& b) {
  const int x = static_cast<int>(a.min.x() <= b.max.x()) & static_cast<int>(b.min.x() <= a.max.x());
  const int y = static_cast<int>(a.min.y() <= b.max.y()) & static_cast<int>(b.min.y() <= a.max.y());
  const int z = static_cast<int>(a.min.z() <= b.max.z()) & static_cast<int>(b.min.z() <= a.max.z());
  return (x & y & z) != 0;
}

// Whether the boxes come within `gap` (m) of each other along every axis, branch-free as
// overlapping (NaN: false).
bool within(const Aabb& a, const Aabb& b, double gap) {
  const int x = static_cast<int>(a.min.x() <= b.max.x() + gap) & static_cast<int>(b.min.x() <= a.max.x() + gap);
  const int y = static_cast<int>(a.min.y() <= b.max.y() + gap) & static_cast<int>(b.min.y() <= a.max.y() + gap);
  const int z = static_cast<int>(a.min.z() <= b.max.z() + gap) & static_cast<int>(b.min.z() <= a.max.z() + gap);
  return (x & y & z) != 0;
}

// Which candidates the substep box test reads, and what it lists besides the overlapping ones.
// The test reads candidates first .. first + count - 1, or (`listed`) the candidate indices
// listed[0 .. count). With a `near` list it also lists there the candidates whose boxes come
// within `gap` m of each other (see collide: the near list, which later substeps read instead of
// every candidate), and counts them in nearCount.
struct BoxTestInput {
  std::size_t first = 0;
  std::size_t count = 0;
  const std::uint32_t* listed = nullptr;
  std::uint32_t* near = nullptr;
  std::size_t nearCount = 0;
  double gap = 0.0;
};

// Lists the candidates of `in` whose two boxes (firstBox(k), secondBox(k)) overlap into kept[0 ..]
// and returns how many; in order. Without a branch per candidate: which pass is hard to predict,
// and a mispredicted branch costs more than the test.
template <class FirstBox, class SecondBox>
std::size_t keepOverlapping(BoxTestInput& in, FirstBox firstBox, SecondBox secondBox, std::uint32_t* kept) {
  std::size_t end = 0, nearEnd = 0;
  for (std::size_t i = 0; i < in.count; ++i) {
    const auto k = static_cast<std::uint32_t>(in.listed ? in.listed[i] : in.first + i);
    const Aabb &a = firstBox(k), &b = secondBox(k);
    kept[end] = k;
    end += overlapping(a, b);
    if (in.near) {
      in.near[nearEnd] = k;
      nearEnd += within(a, b, in.gap);
    }
  }
  in.nearCount = nearEnd;
  return end;
}

#ifdef PLIANT_HAVE_AVX2_KERNELS
// The same with each box's min and max compared in one four-lane instruction each (the fourth
// lane masked off, so nothing past a box is read): the same answers, NaN included (ordered
// comparisons are false for NaN, as <= is).
static_assert(sizeof(Aabb) == 6 * sizeof(double), "Aabb is min then max, three doubles each");
template <bool near>
__attribute__((target("avx2"))) inline void boxTestAvx2(const Aabb& a, const Aabb& b, __m256d gap, std::size_t k,
                                                        std::uint32_t* kept, std::size_t& end, std::uint32_t* nearList,
                                                        std::size_t& nearEnd) {
  const __m256i xyz = _mm256_set_epi64x(0, -1, -1, -1);
  const __m256d aMin = _mm256_maskload_pd(a.min.data(), xyz), aMax = _mm256_maskload_pd(a.max.data(), xyz);
  const __m256d bMin = _mm256_maskload_pd(b.min.data(), xyz), bMax = _mm256_maskload_pd(b.max.data(), xyz);
  const __m256d both = _mm256_and_pd(_mm256_cmp_pd(aMin, bMax, _CMP_LE_OQ), _mm256_cmp_pd(bMin, aMax, _CMP_LE_OQ));
  kept[end] = static_cast<std::uint32_t>(k);
  end += (_mm256_movemask_pd(both) & 7) == 7;
  if constexpr (near) {
    const __m256d within = _mm256_and_pd(_mm256_cmp_pd(aMin, _mm256_add_pd(bMax, gap), _CMP_LE_OQ),
                                         _mm256_cmp_pd(bMin, _mm256_add_pd(aMax, gap), _CMP_LE_OQ));
    nearList[nearEnd] = static_cast<std::uint32_t>(k);
    nearEnd += (_mm256_movemask_pd(within) & 7) == 7;
  }
}
template <bool listed, bool near, class FirstBox, class SecondBox>
__attribute__((target("avx2"))) std::size_t keepOverlappingAvx2(BoxTestInput& in, FirstBox firstBox,
                                                                SecondBox secondBox, std::uint32_t* kept) {
  const __m256d gap = _mm256_set1_pd(in.gap);
  std::uint32_t* const nearList = in.near;
  std::size_t end = 0, nearEnd = 0;
  if constexpr (listed) {
    for (std::size_t i = 0; i < in.count; ++i) {
      const std::size_t k = in.listed[i];
      boxTestAvx2<near>(firstBox(k), secondBox(k), gap, k, kept, end, nearList, nearEnd);
    }
  } else {
    for (std::size_t k = in.first; k < in.first + in.count; ++k)
      boxTestAvx2<near>(firstBox(k), secondBox(k), gap, k, kept, end, nearList, nearEnd);
  }
  in.nearCount = nearEnd;
  return end;
}
#endif

// The substep box test, as keepOverlapping.
template <class FirstBox, class SecondBox>
std::size_t keepOverlappingBoxes(BoxTestInput& in, FirstBox firstBox, SecondBox secondBox, std::uint32_t* kept) {
#ifdef PLIANT_HAVE_AVX2_KERNELS
  if (cpuHasAvx2()) {
    if (in.listed) return keepOverlappingAvx2<true, false>(in, firstBox, secondBox, kept);
    if (in.near) return keepOverlappingAvx2<false, true>(in, firstBox, secondBox, kept);
    return keepOverlappingAvx2<false, false>(in, firstBox, secondBox, kept);
  }
#endif
  return keepOverlapping(in, firstBox, secondBox, kept);
}

// No owned vertex (edge) in this place of a triangle's list.
constexpr std::uint32_t kNone = 0xffffffffu;

// The widest normal cone (half its opening, rad) a search skips a patch under: below 90 degrees
// (what rules out self-intersection), with room for the cloth to bend further in the next
// substeps before the patch must be searched again.
constexpr double kSkipConeAngle = 75.0 * 3.14159265358979323846 / 180.0;

// The broad phase updates its candidates locally while at most one particle in this many has left
// its box (see the top); more, and it runs over every triangle. A local update searches from each
// of their triangles alone, where the run shares the descent among neighbours: in contact-fold-64
// it pays up to about 16 particles of 4,096 (whole run, 64 costs as much, 256 more than the runs).
constexpr std::size_t kLocalUpdateShare = 256;

// Below this many changed triangles a local update searches on one thread.
constexpr std::size_t kParallelUpdate = 8;

// A local update gives way to a run over every triangle when the candidates it added exceed one in
// this many of the run's (plus a chunk).
constexpr std::size_t kAddedShare = 8;

// Below this many candidate pairs the narrow phase runs on one thread.
constexpr std::size_t kParallelCandidates = 4096;
// Candidates per piece of the narrow phase that a thread takes at a time: enough to make taking
// one cheap, few enough that the threads finish together.
constexpr std::size_t kNarrowChunk = 1024;

// The near list (see collide): room between boxes for about this many substeps of the fastest
// particle's motion, at least kNearLeast and at most kNearMost of the reach.
constexpr double kNearSubsteps = 8.0;
constexpr double kNearLeast = 0.05;
constexpr double kNearMost = 0.5;

// Relative tolerance below which two edges count as parallel (sin of the angle between them).
constexpr double kParallel = 1.0e-6;

// Whether edges a and b are not parallel: |a x b| = length (the square root of lengthSquared) >
// kParallel |a| |b|, decided as written, but from the squared lengths without square roots where
// that answer is clear by far (a margin of 1e-6, against rounding errors of a few 1e-16).
bool notParallel(double lengthSquared, double length, const Vec3& a, const Vec3& b) {
  const double aa = a.squaredNorm(), bb = b.squaredNorm();
  if (aa > 1e-100 && aa < 1e100 && bb > 1e-100 && bb < 1e100 &&
      lengthSquared > (1.000001 * kParallel * kParallel) * aa * bb)
    return true;
  return length > kParallel * std::sqrt(aa) * std::sqrt(bb);  // a.norm() is sqrt(a.squaredNorm())
}

// Parameters (sa, sb) in [0, 1] of the nearest points of segments pa-qa and pb-qb: the nearest
// points of the lines, clamped to the segments one after the other (each clamp followed by the
// other segment's nearest point to the clamped one). The pairs known to be apart (collide) take
// only the direction between the two points from them, and measure the gap along it themselves.
std::pair<double, double> closestOnSegments(const Vec3& pa, const Vec3& qa, const Vec3& pb, const Vec3& qb) {
  const Vec3 da = qa - pa, db = qb - pb, r = pa - pb;
  const double aa = da.squaredNorm(), bb = db.squaredNorm(), ab = da.dot(db), ar = da.dot(r), br = db.dot(r);
  // NaN stays NaN: the caller's axis is then no axis.
  auto unit = [](double t) { return std::clamp(t, 0.0, 1.0); };
  if (!(aa > 0.0) && !(bb > 0.0)) return {0.0, 0.0};
  if (!(aa > 0.0)) return {0.0, unit(br / bb)};
  if (!(bb > 0.0)) return {unit(-ar / aa), 0.0};
  const double denominator = aa * bb - ab * ab;
  double sa = denominator > 0.0 ? unit((ab * br - bb * ar) / denominator) : 0.0;
  double sb = (ab * sa + br) / bb;
  if (sb < 0.0) {
    sb = 0.0;
    sa = unit(-ar / aa);
  } else if (sb > 1.0) {
    sb = 1.0;
    sa = unit((ab - ar) / aa);
  }
  return {sa, sb};
}

#ifdef PLIANT_HAVE_AVX2_KERNELS
// The edge-edge narrow phase of four candidates at once, as far as it goes for the pairs that make
// nothing: which of the four may make a contact or need the cubic test, as a bit per lane (lane
// i for edges[i]); the others (bit clear) make no contact. Every operation is the scalar one of
// collide's edgeEdge, in its order (Eigen's dot and squared norm sum (x + y) + z, as a unit test
// checks, and there is no FMA contraction), so each lane's values are the scalar ones bit for bit;
// a lane set here is then tested by the scalar code from the start. Set are the lanes whose
// edges are parallel or turned (rare), that the linear estimate makes a contact of, and that the
// separating axis does not reject (or whose rejection is off: `rejections` false).
struct Lanes3 {
  __m256d x, y, z;
};
__attribute__((target("avx2"))) inline Lanes3 laneSub(const Lanes3& a, const Lanes3& b) {
  return {_mm256_sub_pd(a.x, b.x), _mm256_sub_pd(a.y, b.y), _mm256_sub_pd(a.z, b.z)};
}
__attribute__((target("avx2"))) inline __m256d laneDot(const Lanes3& a, const Lanes3& b) {
  return _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(a.x, b.x), _mm256_mul_pd(a.y, b.y)), _mm256_mul_pd(a.z, b.z));
}
__attribute__((target("avx2"))) inline Lanes3 laneCross(const Lanes3& a, const Lanes3& b) {
  return {_mm256_sub_pd(_mm256_mul_pd(a.y, b.z), _mm256_mul_pd(a.z, b.y)),
          _mm256_sub_pd(_mm256_mul_pd(a.z, b.x), _mm256_mul_pd(a.x, b.z)),
          _mm256_sub_pd(_mm256_mul_pd(a.x, b.y), _mm256_mul_pd(a.y, b.x))};
}
__attribute__((target("avx2"))) inline Lanes3 laneDivide(const Lanes3& a, __m256d d) {
  return {_mm256_div_pd(a.x, d), _mm256_div_pd(a.y, d), _mm256_div_pd(a.z, d)};
}
// a + t (b - a), as lerp.
__attribute__((target("avx2"))) inline Lanes3 laneLerp(const Lanes3& a, const Lanes3& b, __m256d t) {
  const Lanes3 ab = laneSub(b, a);
  return {_mm256_add_pd(a.x, _mm256_mul_pd(t, ab.x)), _mm256_add_pd(a.y, _mm256_mul_pd(t, ab.y)),
          _mm256_add_pd(a.z, _mm256_mul_pd(t, ab.z))};
}
__attribute__((target("avx2"))) inline Lanes3 laneGather(const Vec3* x, const ParticleIndex index[4]) {
  const double* const p[4] = {x[index[0]].data(), x[index[1]].data(), x[index[2]].data(), x[index[3]].data()};
  Lanes3 g;
  gather4(p, g.x, g.y, g.z);
  return g;
}
// notParallel of collide, per lane.
__attribute__((target("avx2"))) inline __m256d laneNotParallel(__m256d lengthSquared, __m256d length, const Lanes3& a,
                                                               const Lanes3& b) {
  const __m256d aa = laneDot(a, a), bb = laneDot(b, b);
  const __m256d tiny = _mm256_set1_pd(1e-100), huge = _mm256_set1_pd(1e100);
  const __m256d inRange =
      _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(aa, tiny, _CMP_GT_OQ), _mm256_cmp_pd(aa, huge, _CMP_LT_OQ)),
                    _mm256_and_pd(_mm256_cmp_pd(bb, tiny, _CMP_GT_OQ), _mm256_cmp_pd(bb, huge, _CMP_LT_OQ)));
  const __m256d bound = _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(1.000001 * kParallel * kParallel), aa), bb);
  const __m256d clear = _mm256_and_pd(inRange, _mm256_cmp_pd(lengthSquared, bound, _CMP_GT_OQ));
  const __m256d asWritten = _mm256_cmp_pd(
      length, _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(kParallel), _mm256_sqrt_pd(aa)), _mm256_sqrt_pd(bb)),
      _CMP_GT_OQ);
  return _mm256_or_pd(clear, asWritten);
}
// ccd.h's separated<kNear> per lane, with the scalar operations: whether the first kNear of the
// four points lie beyond the others along `axis` by more than `bound`, on one side at the start
// (points0) and on the same side at the end (points1). All lanes false where a value is NaN.
template <int kNear>
__attribute__((target("avx2"))) inline __m256d laneSeparated(const Lanes3 (&points0)[4], const Lanes3 (&points1)[4],
                                                             const Lanes3& axis, __m256d bound) {
  __m256d up[2], down[2];
  for (int time = 0; time < 2; ++time) {
    const Lanes3(&x)[4] = time == 0 ? points0 : points1;
    __m256d c[4];
    for (int k = 0; k < 4; ++k) c[k] = laneDot(axis, x[k]);
    __m256d nearLow = c[0], nearHigh = c[0], farLow = c[kNear], farHigh = c[kNear];
    for (int k = 1; k < kNear; ++k) {
      nearLow = _mm256_min_pd(nearLow, c[k]);
      nearHigh = _mm256_max_pd(nearHigh, c[k]);
    }
    for (int k = kNear + 1; k < 4; ++k) {
      farLow = _mm256_min_pd(farLow, c[k]);
      farHigh = _mm256_max_pd(farHigh, c[k]);
    }
    up[time] = _mm256_sub_pd(nearLow, farHigh);
    down[time] = _mm256_sub_pd(farLow, nearHigh);
  }
  return _mm256_or_pd(
      _mm256_and_pd(_mm256_cmp_pd(up[0], bound, _CMP_GT_OQ), _mm256_cmp_pd(up[1], bound, _CMP_GT_OQ)),
      _mm256_and_pd(_mm256_cmp_pd(down[0], bound, _CMP_GT_OQ), _mm256_cmp_pd(down[1], bound, _CMP_GT_OQ)));
}
__attribute__((target("avx2"))) unsigned edgeEdgeMayMake4(const Vec3* x0, const Vec3* x1,
                                                          const std::array<ParticleIndex, 2>* const edges[4][2],
                                                          double reach, double separationReach, bool rejections) {
  ParticleIndex index[4][4];  // pa, qa, pb, qb per lane
  for (int lane = 0; lane < 4; ++lane) {
    index[0][lane] = (*edges[lane][0])[0];
    index[1][lane] = (*edges[lane][0])[1];
    index[2][lane] = (*edges[lane][1])[0];
    index[3][lane] = (*edges[lane][1])[1];
  }
  const Lanes3 pa0 = laneGather(x0, index[0]), qa0 = laneGather(x0, index[1]);
  const Lanes3 pb0 = laneGather(x0, index[2]), qb0 = laneGather(x0, index[3]);
  const Lanes3 pa1 = laneGather(x1, index[0]), qa1 = laneGather(x1, index[1]);
  const Lanes3 pb1 = laneGather(x1, index[2]), qb1 = laneGather(x1, index[3]);
  const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
  const Lanes3 ua = laneSub(qa1, pa1), ub = laneSub(qb1, pb1);
  const Lanes3 n1 = laneCross(ua, ub);
  const __m256d lengthSquared1 = laneDot(n1, n1);
  const __m256d length1 = _mm256_sqrt_pd(lengthSquared1);
  const __m256d notParallel1 = laneNotParallel(lengthSquared1, length1, ua, ub);
  const Lanes3 u1 = laneDivide(n1, length1);  // used only where notParallel1
  const Lanes3 da0 = laneSub(qa0, pa0), db0 = laneSub(qb0, pb0);
  const Lanes3 n0 = laneCross(da0, db0);
  const __m256d lengthSquared0 = laneDot(n0, n0);
  const __m256d length0 = _mm256_sqrt_pd(lengthSquared0);
  const __m256d notParallel0 = laneNotParallel(lengthSquared0, length0, da0, db0);
  const Lanes3 unit0 = laneDivide(n0, length0);
  const Lanes3 u0 = {_mm256_blendv_pd(u1.x, unit0.x, notParallel0), _mm256_blendv_pd(u1.y, unit0.y, notParallel0),
                     _mm256_blendv_pd(u1.z, unit0.z, notParallel0)};
  // Not turned: not parallel at the prediction and u0 . u1 >= 0 (false for NaN, as !(x < 0) is not).
  const __m256d straight = _mm256_and_pd(notParallel1, _mm256_cmp_pd(laneDot(u0, u1), zero, _CMP_NLT_UQ));
  // A non-finite length1 makes the scalar code return at once: such lanes go to it.
  const __m256d finite = _mm256_cmp_pd(_mm256_sub_pd(length1, length1), zero, _CMP_EQ_OQ);
  const __m256d d0 = laneDot(u0, laneSub(pa0, pb0)), d1 = laneDot(u1, laneSub(pa1, pb1));
  const __m256d side = _mm256_blendv_pd(_mm256_set1_pd(-1.0), one, _mm256_cmp_pd(d0, zero, _CMP_GE_OQ));
  const __m256d sideD1 = _mm256_mul_pd(side, d1);
  const __m256d near = _mm256_cmp_pd(sideD1, _mm256_set1_pd(reach), _CMP_LT_OQ);
  // The linear estimate's closest points (closest in edgeEdge), where it is near (most groups of a
  // folded cloth have no lane near: then no lane makes a contact by the estimate).
  __m256d linearContact = zero;
  if (_mm256_movemask_pd(near) != 0) {
    const __m256d crossing = _mm256_cmp_pd(sideD1, zero, _CMP_LT_OQ);
    const __m256d tau = _mm256_blendv_pd(one, _mm256_div_pd(d0, _mm256_sub_pd(d0, d1)), crossing);
    const Lanes3 pa = laneLerp(pa0, pa1, tau), pb = laneLerp(pb0, pb1, tau);
    const Lanes3 da = laneSub(laneLerp(qa0, qa1, tau), pa), db = laneSub(laneLerp(qb0, qb1, tau), pb);
    const Lanes3 r = laneSub(pa, pb);
    const __m256d A = laneDot(da, da), B = laneDot(da, db), C = laneDot(db, db), D = laneDot(da, r), E = laneDot(db, r);
    const __m256d denominator = _mm256_sub_pd(_mm256_mul_pd(A, C), _mm256_mul_pd(B, B));
    const __m256d sa = _mm256_div_pd(_mm256_sub_pd(_mm256_mul_pd(B, E), _mm256_mul_pd(C, D)), denominator);
    const __m256d sb = _mm256_div_pd(_mm256_sub_pd(_mm256_mul_pd(A, E), _mm256_mul_pd(B, D)), denominator);
    const __m256d within = _mm256_and_pd(
        _mm256_and_pd(_mm256_cmp_pd(denominator, zero, _CMP_GT_OQ),
                      _mm256_and_pd(_mm256_cmp_pd(sa, zero, _CMP_GE_OQ), _mm256_cmp_pd(sa, one, _CMP_LE_OQ))),
        _mm256_and_pd(_mm256_cmp_pd(sb, zero, _CMP_GE_OQ), _mm256_cmp_pd(sb, one, _CMP_LE_OQ)));
    linearContact = _mm256_and_pd(near, within);
  }
  // The separating axis u0 (ccd.h, separated<2>): edge a beyond edge b by more than the reach, on
  // one side at both ends of the substep.
  const __m256d separated =
      laneSeparated<2>({pa0, qa0, pb0, qb0}, {pa1, qa1, pb1, qb1}, u0, _mm256_set1_pd(separationReach));
  const __m256d nothing = _mm256_andnot_pd(
      linearContact, _mm256_and_pd(_mm256_and_pd(finite, straight), rejections ? separated : _mm256_setzero_pd()));
  return static_cast<unsigned>(~_mm256_movemask_pd(nothing)) & 15u;
}

// The vertex-triangle narrow phase of four candidates at once, as far as it goes for the pairs that
// end farther than the reach from the triangle's plane and are separated along its normal at the
// start (a third of the candidates of a folded cloth): a bit per lane, clear where collide's
// vertexTriangle makes nothing for certain. As edgeEdgeMayMake4, every operation is the scalar
// one in its order, so each lane's values are the scalar ones; a lane whose bit is set is tested
// by the scalar code from the start. Set are the lanes whose triangle is degenerate or turned or
// not finite, whose vertex ends within the reach on its side (the linear estimate may make a
// contact), and that the separating axis does not reject (or whose rejection is off).
__attribute__((target("avx2"))) unsigned vertexTriangleMayMake4(const Vec3* x0, const Vec3* x1,
                                                                const ParticleIndex vertices[4],
                                                                const std::array<ParticleIndex, 3>* const triangles[4],
                                                                double reach, double separationReach, bool rejections) {
  if (!rejections) return 15u;
  ParticleIndex index[3][4];  // the triangle's corners per lane
  for (int lane = 0; lane < 4; ++lane)
    for (int k = 0; k < 3; ++k) index[k][lane] = (*triangles[lane])[k];
  const Lanes3 p0 = laneGather(x0, vertices), p1 = laneGather(x1, vertices);
  const Lanes3 a0 = laneGather(x0, index[0]), b0 = laneGather(x0, index[1]), c0 = laneGather(x0, index[2]);
  const Lanes3 a1 = laneGather(x1, index[0]), b1 = laneGather(x1, index[1]), c1 = laneGather(x1, index[2]);
  const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
  const Lanes3 n1 = laneCross(laneSub(b1, a1), laneSub(c1, a1));
  const __m256d length1 = _mm256_sqrt_pd(laneDot(n1, n1));
  // A non-finite length1 makes the scalar code return at once: such lanes go to it.
  const __m256d finite = _mm256_cmp_pd(_mm256_sub_pd(length1, length1), zero, _CMP_EQ_OQ);
  const __m256d positive1 = _mm256_cmp_pd(length1, zero, _CMP_GT_OQ);
  const Lanes3 u1 = laneDivide(n1, length1);  // used only where positive1
  const Lanes3 n0 = laneCross(laneSub(b0, a0), laneSub(c0, a0));
  const __m256d length0 = _mm256_sqrt_pd(laneDot(n0, n0));
  const __m256d positive0 = _mm256_cmp_pd(length0, zero, _CMP_GT_OQ);
  const Lanes3 unit0 = laneDivide(n0, length0);
  const Lanes3 u0 = {_mm256_blendv_pd(u1.x, unit0.x, positive0), _mm256_blendv_pd(u1.y, unit0.y, positive0),
                     _mm256_blendv_pd(u1.z, unit0.z, positive0)};
  // Not turned: length1 > 0 and u0 . u1 >= 0 (false for NaN, as !(x < 0) is not).
  const __m256d straight = _mm256_and_pd(positive1, _mm256_cmp_pd(laneDot(u0, u1), zero, _CMP_NLT_UQ));
  const __m256d d0 = laneDot(u0, laneSub(p0, a0)), d1 = laneDot(u1, laneSub(p1, a1));
  const __m256d side = _mm256_blendv_pd(_mm256_set1_pd(-1.0), one, _mm256_cmp_pd(d0, zero, _CMP_GE_OQ));
  // Ends beyond the reach: !(side d1 < reach), true for NaN as in the scalar test.
  const __m256d far = _mm256_cmp_pd(_mm256_mul_pd(side, d1), _mm256_set1_pd(reach), _CMP_NLT_UQ);
  // The separating axis u0 (ccd.h, separated<1>): the vertex beyond the triangle by more than the
  // reach, on one side at both ends of the substep.
  const __m256d separated = laneSeparated<1>({p0, a0, b0, c0}, {p1, a1, b1, c1}, u0, _mm256_set1_pd(separationReach));
  const __m256d nothing = _mm256_and_pd(_mm256_and_pd(finite, straight), _mm256_and_pd(far, separated));
  return static_cast<unsigned>(~_mm256_movemask_pd(nothing)) & 15u;
}

// patchesHold's test of four triangles at once against one axis: a bit per lane (lane i for
// triangles[i]) set where the triangle's normal keeps a positive dot product with the axis over the
// substep. The scalar test's operations in its order (Eigen's cross product, dot and squared norm,
// no FMA contraction), so each lane's answer is the scalar one.
__attribute__((target("avx2"))) unsigned facingAxis4(const Vec3* x0, const Vec3* x1,
                                                     const std::array<ParticleIndex, 3>* const triangles[4],
                                                     const Vec3& axis) {
  ParticleIndex index[3][4];
  for (int lane = 0; lane < 4; ++lane)
    for (int k = 0; k < 3; ++k) index[k][lane] = (*triangles[lane])[k];
  const Lanes3 a0 = laneGather(x0, index[0]), b0 = laneGather(x0, index[1]), c0 = laneGather(x0, index[2]);
  const Lanes3 a1 = laneGather(x1, index[0]), b1 = laneGather(x1, index[1]), c1 = laneGather(x1, index[2]);
  const Lanes3 e10 = laneSub(b0, a0), e20 = laneSub(c0, a0), e11 = laneSub(b1, a1), e21 = laneSub(c1, a1);
  const Lanes3 n = {_mm256_set1_pd(axis.x()), _mm256_set1_pd(axis.y()), _mm256_set1_pd(axis.z())};
  const Lanes3 k0 = laneCross(e20, n), k1 = laneCross(e21, n);
  const __m256d margin =
      _mm256_mul_pd(_mm256_set1_pd(1e-12),
                    _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(laneDot(e10, e10), laneDot(e20, e20)), laneDot(e11, e11)),
                                  laneDot(e21, e21)));
  const __m256d start = _mm256_cmp_pd(laneDot(e10, k0), margin, _CMP_GT_OQ);
  const __m256d end = _mm256_cmp_pd(laneDot(e11, k1), margin, _CMP_GT_OQ);
  const __m256d middle = _mm256_cmp_pd(_mm256_add_pd(laneDot(e10, k1), laneDot(e11, k0)),
                                       _mm256_mul_pd(_mm256_set1_pd(2.0), margin), _CMP_GT_OQ);
  return static_cast<unsigned>(_mm256_movemask_pd(_mm256_and_pd(_mm256_and_pd(start, end), middle)));
}

// leafCones' unit normal coefficients of the triangles of one leaf (at most four, one per lane):
// normals[3 i + j] for triangle i, coefficient j (start, middle, end), with the scalar code's
// operations in its order (so the same bits); false when one of them has no direction.
__attribute__((target("avx2"))) bool leafNormals4(const Vec3* x0, const Vec3* x1,
                                                  const std::array<ParticleIndex, 3>* triangles,
                                                  std::span<const std::uint32_t> leaf, Vec3* normals) {
  const std::size_t count = leaf.size();
  ParticleIndex index[3][4];
  for (std::size_t lane = 0; lane < 4; ++lane)  // lanes past the leaf repeat its first triangle
    for (int k = 0; k < 3; ++k) index[k][lane] = triangles[leaf[lane < count ? lane : 0]][k];
  const Lanes3 a0 = laneGather(x0, index[0]), b0 = laneGather(x0, index[1]), c0 = laneGather(x0, index[2]);
  const Lanes3 a1 = laneGather(x1, index[0]), b1 = laneGather(x1, index[1]), c1 = laneGather(x1, index[2]);
  const Lanes3 e10 = laneSub(b0, a0), e20 = laneSub(c0, a0), e11 = laneSub(b1, a1), e21 = laneSub(c1, a1);
  const Lanes3 across = laneCross(e10, e21), back = laneCross(e11, e20);
  const __m256d half = _mm256_set1_pd(0.5);
  const Lanes3 coefficients[3] = {
      laneCross(e10, e20),
      {_mm256_mul_pd(half, _mm256_add_pd(across.x, back.x)), _mm256_mul_pd(half, _mm256_add_pd(across.y, back.y)),
       _mm256_mul_pd(half, _mm256_add_pd(across.z, back.z))},
      laneCross(e11, e21)};
  const __m256d infinity = _mm256_set1_pd(std::numeric_limits<double>::infinity());
  int valid = 0xf;
  alignas(32) double unit[3][3][4];  // coefficient, axis, lane
  for (int j = 0; j < 3; ++j) {
    const __m256d length = _mm256_sqrt_pd(laneDot(coefficients[j], coefficients[j]));
    // length > 0 and finite (below infinity: false for NaN too)
    valid &= _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(length, _mm256_setzero_pd(), _CMP_GT_OQ),
                                              _mm256_cmp_pd(length, infinity, _CMP_LT_OQ)));
    const Lanes3 n = laneDivide(coefficients[j], length);
    _mm256_store_pd(unit[j][0], n.x);
    _mm256_store_pd(unit[j][1], n.y);
    _mm256_store_pd(unit[j][2], n.z);
  }
  for (std::size_t i = 0; i < count; ++i)
    for (int j = 0; j < 3; ++j) normals[3 * i + j] = Vec3(unit[j][0][i], unit[j][1][i], unit[j][2][i]);
  const int lanes = (1 << count) - 1;
  return (valid & lanes) == lanes;
}

// std::min(a, b) and std::max(a, b) per lane, as Aabb::add takes them: the same comparison picks
// the lane, so ties of +0 and -0 and NaN come out as in the scalar code (the hardware's min and max
// return the second operand on those).
__attribute__((target("avx2"))) inline __m256d laneStdMin(__m256d a, __m256d b) {
  return _mm256_blendv_pd(a, b, _mm256_cmp_pd(b, a, _CMP_LT_OQ));
}
__attribute__((target("avx2"))) inline __m256d laneStdMax(__m256d a, __m256d b) {
  return _mm256_blendv_pd(a, b, _mm256_cmp_pd(a, b, _CMP_LT_OQ));
}

// Boxes that are unions of particle boxes (the substep boxes of triangles and edges), `corners`
// particle boxes each: for each k in list[begin, end), box[k] = union of parts[slots[k][0 .. corners)].
// Each box's min and max in one masked four-lane register (the fourth lane off, so nothing past a
// box is read or written); the union takes Aabb::add's std::min and std::max comparisons, so the
// boxes are the scalar ones bit for bit.
template <int corners>
__attribute__((target("avx2"))) void unionBoxes4(const Aabb* parts, const std::array<std::uint32_t, corners>* slots,
                                                 const std::uint32_t* list, std::size_t begin, std::size_t end,
                                                 Aabb* boxes) {
  const __m256i xyz = _mm256_set_epi64x(0, -1, -1, -1);
  for (std::size_t i = begin; i < end; ++i) {
    const std::uint32_t k = list[i];
    const Aabb& first = parts[slots[k][0]];
    __m256d low = _mm256_maskload_pd(first.min.data(), xyz), high = _mm256_maskload_pd(first.max.data(), xyz);
    for (int c = 1; c < corners; ++c) {
      const Aabb& part = parts[slots[k][c]];
      const __m256d partLow = _mm256_maskload_pd(part.min.data(), xyz);
      const __m256d partHigh = _mm256_maskload_pd(part.max.data(), xyz);
      low = laneStdMin(low, partLow);
      high = laneStdMax(high, partHigh);
    }
    _mm256_maskstore_pd(boxes[k].min.data(), xyz, low);
    _mm256_maskstore_pd(boxes[k].max.data(), xyz, high);
  }
}

// The particles' substep boxes (x^n to the prediction, padded by `pad` m) of slots [begin, end),
// their largest squared motion (m^2), whether one left its region (in the broad phase's frame,
// offset `frame`) and, with `anchor`, how far the boxes' corners moved from those (`drift`, m, the
// largest coordinate difference; `unordered` set where one is NaN): the scalar loop of collide
// with each box's min and max in one masked four-lane register, the same operations and
// comparisons (Aabb::add's std::min and std::max, contains' <=), so the same boxes and answers.
__attribute__((target("avx2"))) void substepParticleBoxes(const Vec3* x0, const Vec3* x1,
                                                          const ParticleIndex* particles, std::size_t begin,
                                                          std::size_t end, double pad, bool check, const Aabb* region,
                                                          const Vec3& frame, Aabb* boxes, int& broken,
                                                          double& largestMotion, double slowSquared, std::size_t& slow,
                                                          const Aabb* anchor, double& drift, int& unordered) {
  const __m256i xyz = _mm256_set_epi64x(0, -1, -1, -1);
  const __m256d infinity = _mm256_set1_pd(std::numeric_limits<double>::infinity());
  const __m256d minusInfinity = _mm256_set1_pd(-std::numeric_limits<double>::infinity());
  const __m256d padding = _mm256_set1_pd(pad);
  const __m256d shift = _mm256_maskload_pd(frame.data(), xyz);
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m256d moved = _mm256_setzero_pd(), nan = _mm256_setzero_pd();
  for (std::size_t i = begin; i < end; ++i) {
    const ParticleIndex p = particles[i];
    const __m256d a = _mm256_maskload_pd(x0[p].data(), xyz), b = _mm256_maskload_pd(x1[p].data(), xyz);
    const __m256d low = laneStdMin(laneStdMin(infinity, a), b);  // Aabb() then add(x^n), add(prediction)
    const __m256d high = laneStdMax(laneStdMax(minusInfinity, a), b);
    const __m256d boxLow = _mm256_sub_pd(low, padding), boxHigh = _mm256_add_pd(high, padding);
    _mm256_maskstore_pd(boxes[i].min.data(), xyz, boxLow);
    _mm256_maskstore_pd(boxes[i].max.data(), xyz, boxHigh);
    if (anchor) {
      const __m256d lowMoved = _mm256_sub_pd(boxLow, _mm256_maskload_pd(anchor[i].min.data(), xyz));
      const __m256d highMoved = _mm256_sub_pd(boxHigh, _mm256_maskload_pd(anchor[i].max.data(), xyz));
      const __m256d both = _mm256_max_pd(_mm256_andnot_pd(sign, lowMoved), _mm256_andnot_pd(sign, highMoved));
      moved = _mm256_max_pd(moved, both);
      nan = _mm256_or_pd(nan, _mm256_or_pd(_mm256_cmp_pd(lowMoved, lowMoved, _CMP_UNORD_Q),
                                           _mm256_cmp_pd(highMoved, highMoved, _CMP_UNORD_Q)));
    }
    const double motion = (x1[p] - x0[p]).squaredNorm();
    largestMotion = std::max(largestMotion, motion);
    slow += static_cast<std::size_t>(motion < slowSquared);
    if (check) {
      const __m256d regionLow = _mm256_maskload_pd(region[i].min.data(), xyz);
      const __m256d regionHigh = _mm256_maskload_pd(region[i].max.data(), xyz);
      const __m256d at0 = _mm256_sub_pd(a, shift), at1 = _mm256_sub_pd(b, shift);
      const __m256d inside = _mm256_and_pd(
          _mm256_and_pd(_mm256_cmp_pd(regionLow, at0, _CMP_LE_OQ), _mm256_cmp_pd(at0, regionHigh, _CMP_LE_OQ)),
          _mm256_and_pd(_mm256_cmp_pd(regionLow, at1, _CMP_LE_OQ), _mm256_cmp_pd(at1, regionHigh, _CMP_LE_OQ)));
      if ((_mm256_movemask_pd(inside) & 7) != 7) broken = 1;
    }
  }
  if (anchor) {
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, moved);  // x, y, z (the fourth lane is no coordinate)
    drift = std::max({drift, lanes[0], lanes[1], lanes[2]});
    if (_mm256_movemask_pd(nan) != 0) unordered = 1;
  }
}
#endif

// Bound on the broad phase's candidates: at most this many per vertex (vertex-triangle pairs) and
// per edge (edge-edge pairs), summed over the mesh. A vertex of a folded cloth meets a few dozen
// triangles in a step; a thickness or a motion of the size of the whole cloth makes every pair a
// candidate, quadratic in the mesh, and is refused instead (issue 12).
constexpr std::size_t kMaxCandidatesPerQuery = 64;
// And at most this many contacts per collision particle in a substep: a vertex of a folded cloth
// touches a few triangles and edges.
constexpr std::size_t kMaxContactsPerParticle = 16;

}  // namespace

void SurfaceContacts::prepare(const Model& model) {
  contacts_.clear();
  inChunks_ = false;
  chunkCount_ = 0;
  contactCount_ = 0;
  joinStale_ = false;
  broadPhaseRuns_ = 0;
  broadPhaseUpdates_ = 0;
  overflow_.clear();
  s_ = Scratch();
  active_ = model.selfCollision && !model.collisionTriangles.empty();
  if (!active_) return;
  Scratch& s = s_;
  for (const CollisionTriangle& t : model.collisionTriangles) {
    s.triangles.push_back({t.particles[0], t.particles[1], t.particles[2]});
    for (int k = 0; k < 3; ++k) {
      s.particles.push_back(t.particles[k]);
      const ParticleIndex a = t.particles[k], b = t.particles[(k + 1) % 3];
      s.edges.push_back({std::min(a, b), std::max(a, b)});
    }
  }
  std::sort(s.particles.begin(), s.particles.end());
  s.particles.erase(std::unique(s.particles.begin(), s.particles.end()), s.particles.end());
  std::sort(s.edges.begin(), s.edges.end());
  s.edges.erase(std::unique(s.edges.begin(), s.edges.end()), s.edges.end());
  for (const auto& t : s.triangles) s.triangleSlots.push_back({slotOf(t[0]), slotOf(t[1]), slotOf(t[2])});
  for (const auto& e : s.edges) s.edgeSlots.push_back({slotOf(e[0]), slotOf(e[1])});
  s.neighbourStart.assign(s.particles.size() + 1, 0);
  for (const auto& e : s.edgeSlots) {
    ++s.neighbourStart[e[0] + 1];
    ++s.neighbourStart[e[1] + 1];
  }
  for (std::size_t i = 0; i < s.particles.size(); ++i) s.neighbourStart[i + 1] += s.neighbourStart[i];
  s.neighbours.resize(s.neighbourStart.back());
  {
    std::vector<std::uint32_t> fill(s.neighbourStart.begin(), s.neighbourStart.end() - 1);
    // Edges ascending by (smaller, larger) slot: slot i first receives its smaller neighbours (from
    // edges ending at i) in ascending order, then its larger ones, so each list comes out sorted.
    for (const auto& e : s.edgeSlots) {
      s.neighbours[fill[e[0]]++] = e[1];
      s.neighbours[fill[e[1]]++] = e[0];
    }
  }
  s.neighbourFilter.assign(s.particles.size(), 0);
  for (std::uint32_t i = 0; i < s.particles.size(); ++i) {
    s.neighbourFilter[i] |= std::uint64_t{1} << filterBit(i);
    for (std::uint32_t k = s.neighbourStart[i]; k < s.neighbourStart[i + 1]; ++k)
      s.neighbourFilter[i] |= std::uint64_t{1} << filterBit(s.neighbours[k]);
  }
  // Each slot's triangles and edges, ascending (the local update's index).
  auto index = [&](const auto& items, std::vector<std::uint32_t>& start, std::vector<std::uint32_t>& list) {
    start.assign(s.particles.size() + 1, 0);
    for (const auto& slots : items)
      for (std::uint32_t k : slots) ++start[k + 1];
    for (std::size_t i = 0; i < s.particles.size(); ++i) start[i + 1] += start[i];
    list.resize(start.back());
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::size_t item = 0; item < items.size(); ++item)
      for (std::uint32_t k : items[item]) list[fill[k]++] = static_cast<std::uint32_t>(item);
  };
  index(s.triangleSlots, s.slotTriangleStart, s.slotTriangles);
  index(s.edgeSlots, s.slotEdgeStart, s.slotEdges);
  s.escapedMark.assign(s.particles.size(), 0);
  s.triangleChanged.assign(s.triangles.size(), 0);
  s.edgeChanged.assign(s.edges.size(), 0);
  s.escapedSlots.reserve(s.particles.size() / kLocalUpdateShare + 1);
  s.changedTriangles.reserve(s.triangles.size());
  s.changedEdges.reserve(s.edges.size());
  // A start for the local update's lists; like the candidates', they grow to what the scene needs.
  s.foundVertexTriangle.reserve(1024);
  s.foundEdgeEdge.reserve(1024);
  s.kinematicPath.assign(s.particles.size(), -1);
  for (std::size_t k = 0; k < model.kinematicParticles.size(); ++k) {
    const ParticleIndex p = model.kinematicParticles[k].particle;
    if (std::binary_search(s.particles.begin(), s.particles.end(), p)) {
      s.kinematicPath[slotOf(p)] = static_cast<std::int32_t>(k);
      s.kinematicSurface = true;
    }
  }
  // The hierarchies over triangles and edges, on the rest layout (see box_tree.h).
  std::vector<Vec3> centres;
  centres.reserve(std::max({s.triangles.size(), s.edges.size(), s.particles.size()}));
  for (const auto& t : s.triangles)
    centres.push_back((model.initialPosition[t[0]] + model.initialPosition[t[1]] + model.initialPosition[t[2]]) / 3.0);
  s.triangleTree.build(centres);
  // Owners: the first triangle a slot (edge) belongs to.
  std::vector<std::array<std::uint32_t, 3>> triangleEdges(s.triangles.size());
  s.ownedVertices.assign(s.triangles.size(), {kNone, kNone, kNone});
  s.ownedEdges.assign(s.triangles.size(), {kNone, kNone, kNone});
  {
    std::vector<std::uint8_t> vertexOwned(s.particles.size(), 0), edgeOwned(s.edges.size(), 0);
    for (std::size_t t = 0; t < s.triangles.size(); ++t) {
      int vertices = 0, edges = 0;
      for (int k = 0; k < 3; ++k) {
        const std::uint32_t corner = s.triangleSlots[t][k];
        if (!vertexOwned[corner]) {
          vertexOwned[corner] = 1;
          s.ownedVertices[t][vertices++] = corner;
        }
        const std::uint32_t e = edgeOf(s.triangles[t][k], s.triangles[t][(k + 1) % 3]);
        triangleEdges[t][k] = e;
        if (!edgeOwned[e]) {
          edgeOwned[e] = 1;
          s.ownedEdges[t][edges++] = e;
        }
      }
    }
  }
  // Which nodes' triangles form a topological disk: joined through shared edges, no edge in more
  // than two of them, and Euler characteristic V - E + F = 1 (a connected surface with boundary
  // has 1 exactly when it is a disk; pinched vertices lower it). Only those may be skipped.
  s.diskNode.assign(s.triangleTree.nodeCount(), 0);
  {
    std::vector<std::array<std::uint32_t, 2>> edgeUse;  // (edge, local triangle)
    std::vector<std::uint32_t> vertices, parent;
    for (std::uint32_t k = 0; k < s.triangleTree.nodeCount(); ++k) {
      const std::span<const std::uint32_t> tris = s.triangleTree.primitives(k);
      edgeUse.clear();
      vertices.clear();
      parent.resize(tris.size());
      for (std::uint32_t i = 0; i < tris.size(); ++i) {
        parent[i] = i;
        for (int c = 0; c < 3; ++c) {
          edgeUse.push_back({triangleEdges[tris[i]][c], i});
          vertices.push_back(s.triangleSlots[tris[i]][c]);
        }
      }
      std::sort(edgeUse.begin(), edgeUse.end());
      std::sort(vertices.begin(), vertices.end());
      const auto vertexCount =
          static_cast<std::int64_t>(std::unique(vertices.begin(), vertices.end()) - vertices.begin());
      auto root = [&](std::uint32_t i) {
        while (parent[i] != i) i = parent[i] = parent[parent[i]];
        return i;
      };
      bool manifold = true;
      std::int64_t edgeCount = 0;
      for (std::size_t j = 0; j < edgeUse.size();) {
        std::size_t end = j + 1;
        while (end < edgeUse.size() && edgeUse[end][0] == edgeUse[j][0]) ++end;
        if (end - j > 2) manifold = false;
        if (end - j == 2) parent[root(edgeUse[j][1])] = root(edgeUse[j + 1][1]);
        ++edgeCount;
        j = end;
      }
      std::size_t components = 0;
      for (std::uint32_t i = 0; i < tris.size(); ++i) components += root(i) == i;
      s.diskNode[k] =
          manifold && components == 1 && vertexCount - edgeCount + static_cast<std::int64_t>(tris.size()) == 1;
    }
  }
  s.skipNode.assign(s.triangleTree.nodeCount(), 0);
  s.patchOf.assign(s.triangles.size(), kNone);
  s.cones.resize(s.triangleTree.nodeCount());
  s.skipped.reserve(s.triangleTree.nodeCount());  // no allocation in a step
  s.region.resize(s.particles.size());
  s.vertexBoxes.resize(s.particles.size());
  s.triangleBoxes.resize(s.triangles.size());
  s.edgeBoxes.resize(s.edges.size());
  s.substepVertex.resize(s.particles.size());
  s.substepTriangle.resize(s.triangles.size());
  s.substepEdge.resize(s.edges.size());
  s.triangleListed.assign(s.triangles.size(), 0);
  s.edgeListed.assign(s.edges.size(), 0);
  s.candidateTriangles.reserve(s.triangles.size());  // no allocation in a step
  s.candidateEdges.reserve(s.edges.size());
  s.anchorBoxes.reserve(s.particles.size());
  s.travelFrom.assign(s.particles.size(), Vec3::Zero());
  s.travel.assign(s.particles.size(), 0.0);
  s.travelReach.assign(s.particles.size(), 0.0);
  s.travelStarted = false;
  s.apartNoted = false;
  // A start for the candidate and contact arrays; they grow to what the scene needs and stay.
  s.vertexTriangle.reserve(4 * s.particles.size());
  s.edgeEdge.reserve(4 * s.edges.size());
  s.vertexTriangleApart.clear();
  s.edgeEdgeApart.clear();
  s.vertexTriangleApart.reserve(4 * s.particles.size());
  s.edgeEdgeApart.reserve(4 * s.edges.size());
  contacts_.reserve(s.particles.size());
}

Vec3 SurfaceContacts::frameOffset(int j) const {
  const double h = s_.frameStep;
  return (j * h) * s_.frameVelocity + (0.5 * h * h * j * (j - 1.0)) * s_.frameAcceleration;
}

bool SurfaceContacts::patchesHold(const State& state, std::size_t begin, std::size_t end) const {
  const Scratch& s = s_;
  const Vec3* x0 = state.previousPosition.data();
  const Vec3* x1 = state.position.data();
  for (const Scratch::SkippedPatch& patch : s.skipped) {
    const Vec3& axis = patch.axis;
    const std::span<const std::uint32_t> triangles = s.triangleTree.primitives(patch.node);
    // This patch's part of [begin, end) in the patches' triangles, counted in order.
    const std::size_t first = std::clamp(begin, patch.before, patch.before + triangles.size()) - patch.before;
    const std::size_t last = std::clamp(end, patch.before, patch.before + triangles.size()) - patch.before;
    std::size_t k = first;
#ifdef PLIANT_HAVE_AVX2_KERNELS
    if (cpuHasAvx2()) {
      for (; k + 4 <= last; k += 4) {
        const std::array<ParticleIndex, 3>* const four[4] = {&s.triangles[triangles[k]], &s.triangles[triangles[k + 1]],
                                                             &s.triangles[triangles[k + 2]],
                                                             &s.triangles[triangles[k + 3]]};
        if (facingAxis4(x0, x1, four, axis) != 15u) return false;
      }
    }
#endif
    for (std::uint32_t t : triangles.subspan(k, last - k)) {
      const auto& tri = s.triangles[t];
      // The normal n(t) = e1(t) x e2(t), both edges linear in t over the substep, is a quadratic,
      // (1 - t)^2 N0 + 2 t (1 - t) Nm + t^2 N1 with Nm = (e1(0) x e2(1) + e1(1) x e2(0)) / 2. The
      // Bernstein weights are not negative, so axis . n(t) > 0 over the whole substep when it is for
      // N0, Nm and N1; axis . (a x b) = a . (b x axis). Each must clear a relative 1e-12 of the
      // edges' squared lengths (above |N|), for the rounding.
      const Vec3 e10 = x0[tri[1]] - x0[tri[0]], e20 = x0[tri[2]] - x0[tri[0]];
      const Vec3 e11 = x1[tri[1]] - x1[tri[0]], e21 = x1[tri[2]] - x1[tri[0]];
      const Vec3 c0 = e20.cross(axis), c1 = e21.cross(axis);
      const double margin = 1e-12 * (e10.squaredNorm() + e20.squaredNorm() + e11.squaredNorm() + e21.squaredNorm());
      if (!(e10.dot(c0) > margin && e11.dot(c1) > margin && e10.dot(c1) + e11.dot(c0) > 2.0 * margin)) return false;
    }
  }
  return true;
}

void SurfaceContacts::leafCones(const State& state, std::size_t begin, std::size_t end) {
  Scratch& s = s_;
  const Vec3* x0 = state.previousPosition.data();
  const Vec3* x1 = state.position.data();
  for (std::size_t k = begin; k < end; ++k) {
    const auto node = static_cast<std::uint32_t>(k);
    if (!s.triangleTree.leaf(node)) continue;
    // A leaf's cone: around the mean of its unit normal coefficients (see patchesHold), as wide as
    // the farthest of them.
    Scratch::Cone cone;
    std::array<Vec3, 3 * BoxTree::kLeafSize> normals;
    std::size_t count = 0;
    Vec3 sum = Vec3::Zero();
    bool valid = true;
    const std::span<const std::uint32_t> leaf = s.triangleTree.primitives(node);
#ifdef PLIANT_HAVE_AVX2_KERNELS
    if (coneLanes_ && cpuHasAvx2() && !leaf.empty() && leaf.size() <= 4) {
      valid = leafNormals4(x0, x1, s.triangles.data(), leaf, normals.data());
      count = 3 * leaf.size();
      for (std::size_t i = 0; i < count; ++i) sum += normals[i];
    } else
#endif
    {
      for (std::uint32_t t : leaf) {
        const auto& tri = s.triangles[t];
        const Vec3 e10 = x0[tri[1]] - x0[tri[0]], e20 = x0[tri[2]] - x0[tri[0]];
        const Vec3 e11 = x1[tri[1]] - x1[tri[0]], e21 = x1[tri[2]] - x1[tri[0]];
        for (const Vec3& n :
             {Vec3(e10.cross(e20)), Vec3(0.5 * (e10.cross(e21) + e11.cross(e20))), Vec3(e11.cross(e21))}) {
          const double length = n.norm();
          if (!(length > 0.0) || !std::isfinite(length)) valid = false;
          normals[count] = n / length;
          sum += normals[count++];
        }
      }
    }
    const double length = sum.norm();
    if (valid && length > 0.0) {
      cone.axis = sum / length;
      double lowest = 1.0;
      for (std::size_t i = 0; i < count; ++i) lowest = std::min(lowest, cone.axis.dot(normals[i]));
      cone.angle = std::acos(std::clamp(lowest, -1.0, 1.0)) + 1e-9;
    } else {
      cone.angle = std::numeric_limits<double>::infinity();
    }
    s.cones[k] = cone;
    s.skipNode[k] = s.diskNode[k] && cone.angle <= kSkipConeAngle;
  }
}

void SurfaceContacts::findPatches() {
  Scratch& s = s_;
  using Cone = Scratch::Cone;
  constexpr double kInvalid = std::numeric_limits<double>::infinity();
  // The smallest cone found holding two cones (both unit axes): its opening spans both.
  auto merge = [](const Cone& a, const Cone& b) {
    if (!(a.angle <= kSkipConeAngle) || !(b.angle <= kSkipConeAngle)) return Cone{a.axis, kInvalid};
    const double between = std::acos(std::clamp(a.axis.dot(b.axis), -1.0, 1.0));
    if (between + b.angle <= a.angle) return a;
    if (between + a.angle <= b.angle) return b;
    const double angle = 0.5 * (between + a.angle + b.angle);
    if (!(angle <= kSkipConeAngle)) return Cone{a.axis, kInvalid};
    const double sine = std::sin(between);
    if (sine < 1e-9) return Cone{a.axis, std::max(a.angle, b.angle) + between + 1e-9};
    // Turn a's axis towards b's by angle - a.angle, in their plane.
    const double turn = angle - a.angle;
    const Vec3 axis = (std::sin(between - turn) * a.axis + std::sin(turn) * b.axis) / sine;
    const double length = axis.norm();
    if (!(length > 0.0)) return Cone{a.axis, kInvalid};
    return Cone{axis / length, angle + 1e-9};  // and a little for the rounding
  };
  // Inner nodes after their children (which come after them), the leaves' cones already found.
  for (std::size_t k = s.triangleTree.nodeCount(); k-- > 0;) {
    const auto node = static_cast<std::uint32_t>(k);
    if (s.triangleTree.leaf(node)) continue;
    s.cones[k] = merge(s.cones[node + 1], s.cones[s.triangleTree.right(node)]);
    s.skipNode[k] = s.diskNode[k] && s.cones[k].angle <= kSkipConeAngle;
  }
  if (!patchSkipping_) std::fill(s.skipNode.begin(), s.skipNode.end(), 0);
  // The topmost skipped nodes, each checked in the next substeps.
  s.skipped.clear();
  std::size_t skippedCount = 0;
  if (s.triangleTree.nodeCount() == 0) return;
  std::uint32_t stack[128];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const std::uint32_t node = stack[--top];
    if (s.skipNode[node]) {
      s.skipped.push_back({node, s.cones[node].axis, skippedCount});
      skippedCount += s.triangleTree.primitives(node).size();
    } else if (!s.triangleTree.leaf(node)) {
      stack[top++] = s.triangleTree.right(node);
      stack[top++] = node + 1;
    }
  }
  std::fill(s.patchOf.begin(), s.patchOf.end(), kNone);
  for (std::size_t k = 0; k < s.skipped.size(); ++k)
    for (std::uint32_t t : s.triangleTree.primitives(s.skipped[k].node)) s.patchOf[t] = static_cast<std::uint32_t>(k);
}

std::uint32_t SurfaceContacts::slotOf(ParticleIndex p) const {
  const auto found = std::lower_bound(s_.particles.begin(), s_.particles.end(), p);
  return found != s_.particles.end() && *found == p ? static_cast<std::uint32_t>(found - s_.particles.begin()) : kNone;
}

std::uint32_t SurfaceContacts::edgeOf(ParticleIndex p, ParticleIndex q) const {
  const std::array<ParticleIndex, 2> key{std::min(p, q), std::max(p, q)};
  const auto found = std::lower_bound(s_.edges.begin(), s_.edges.end(), key);
  return found != s_.edges.end() && *found == key ? static_cast<std::uint32_t>(found - s_.edges.begin()) : kNone;
}

bool SurfaceContacts::vertexTriangleCandidate(ParticleIndex vertex, std::uint32_t triangle) const {
  const std::uint32_t slot = slotOf(vertex);
  if (slot == kNone) return false;
  const Scratch::VertexTriangle pair{slot, triangle};
  return std::binary_search(s_.vertexTriangle.begin(), s_.vertexTriangle.end(), pair) ||
         std::binary_search(s_.vertexTriangleAdded.begin(), s_.vertexTriangleAdded.end(), pair);
}

bool SurfaceContacts::edgeEdgeCandidate(ParticleIndex a0, ParticleIndex a1, ParticleIndex b0, ParticleIndex b1) const {
  const std::uint32_t a = edgeOf(a0, a1), b = edgeOf(b0, b1);
  if (a == kNone || b == kNone) return false;
  const std::array<std::uint32_t, 2> pair{std::min(a, b), std::max(a, b)};
  return std::binary_search(s_.edgeEdge.begin(), s_.edgeEdge.end(), pair) ||
         std::binary_search(s_.edgeEdgeAdded.begin(), s_.edgeEdgeAdded.end(), pair);
}

std::size_t SurfaceContacts::skippedTriangles() const {
  if (s_.skipped.empty()) return 0;
  const Scratch::SkippedPatch& last = s_.skipped.back();
  return last.before + s_.triangleTree.primitives(last.node).size();
}

bool SurfaceContacts::parallel() const { return active_ && s_.particles.size() >= kParallelQueries; }

// Where particle slot i will be during the rest of the step, in the broad phase's frame: x^n, the
// prediction, and free flight to the end of the step, x(j) = x^n + j h v + h^2 a j (j - 1) / 2
// (symplectic Euler with v already kicked once), as seen in substep j's frame at the start and end
// of the last substep (in between it moves on a line when a is the frame's); a kinematic or fixed
// particle's positions at every substep end, which are exactly where it will be.
void SurfaceContacts::drawParticleBox(const Model& model, const SolverSettings& settings, const State& state, double h,
                                      int remainingSubsteps, double time, double reach, std::size_t i) {
  Scratch& s = s_;
  const double m = remainingSubsteps;
  const double span = m * h;  // s, the rest of the step
  const Vec3 lastOffset = frameOffset(remainingSubsteps - 1);
  const double last = m - 1.0;
  const ParticleIndex p = s.particles[i];
  const Vec3& start = state.previousPosition[p];
  Aabb box;
  box.add(start);
  box.add(state.position[p]);
  const double w = model.inverseMass[p];
  if (s.kinematicPath[i] >= 0) {
    const PathFunction& path = model.kinematicParticles[s.kinematicPath[i]].path;
    for (int j = 1; j < remainingSubsteps; ++j) {
      const Vec3 offset = frameOffset(j);
      box.add(path(time + j * h) - offset);
      box.add(path(time + (j + 1) * h) - offset);
    }
  } else if (w > 0.0) {
    const Vec3 acceleration = settings.gravity + w * state.externalForce[p];
    box.add(start + (last * h) * state.velocity[p] + (0.5 * h * h * last * (last - 1.0)) * acceleration - lastOffset);
    box.add(start + span * state.velocity[p] + (0.5 * h * h * m * (m - 1.0)) * acceleration - lastOffset);
  } else {
    for (int j = 1; j < remainingSubsteps; ++j) box.add(start - frameOffset(j));
  }
  // Room for the corrections the constraints will make: half the thickness, and along each axis
  // a quarter of the travel along it plus a twentieth of the whole travel (a falling cloth is
  // deflected sideways far less than it falls). Less makes more runs, more more candidates.
  // And a relative 1e-12 for the rounding of the frame's shift (far above it).
  const Vec3 travel = box.max - box.min;
  const double rounding =
      1e-12 * (box.min.cwiseAbs().maxCoeff() + box.max.cwiseAbs().maxCoeff() + lastOffset.cwiseAbs().maxCoeff());
  box.inflate(Vec3((0.5 * model.surfaceThickness + 0.05 * travel.norm() + rounding) * Vec3::Ones() + 0.25 * travel));
  s.region[i] = box;
  s.vertexBoxes[i] = box;
  s.vertexBoxes[i].inflate(0.5 * reach);
}

void SurfaceContacts::drawTriangleBox(std::uint32_t t, double reach) {
  Aabb box;
  for (std::uint32_t k : s_.triangleSlots[t]) box.add(s_.region[k]);
  box.inflate(0.5 * reach);
  s_.triangleBoxes[t] = box;
}

void SurfaceContacts::drawEdgeBox(std::uint32_t e, double reach) {
  Aabb box = s_.region[s_.edgeSlots[e][0]];
  box.add(s_.region[s_.edgeSlots[e][1]]);
  box.inflate(0.5 * reach);
  s_.edgeBoxes[e] = box;
}

// Most pairs asked are not near: the filter (a slot's neighbours and itself hashed into 64 bits)
// answers those without the search.
inline __attribute__((always_inline)) bool SurfaceContacts::meshNear(std::uint32_t a, std::uint32_t b) const {
  if (!((s_.neighbourFilter[a] >> filterBit(b)) & 1u)) return false;
  return a == b || std::binary_search(s_.neighbours.begin() + s_.neighbourStart[a],
                                      s_.neighbours.begin() + s_.neighbourStart[a + 1], b);
}

// 2. Vertex-triangle candidates: each vertex (of either triangle's owned ones) against the other
//    triangle, when it is neither a corner of it nor joined to a corner by an edge, and their boxes
//    overlap. 3. Edge-edge candidates: each pair of owned edges, once (a < b), whose ends are
//    neither shared nor joined by an edge and whose boxes overlap. Pairs of immovable particles
//    only are left out. With `onlyMarked` (the local update), only ta's owned vertices and edges
//    marked in escapedMark and edgeChanged are paired with tb's.
template <class KeepVertex, class KeepEdges>
inline __attribute__((always_inline)) void SurfaceContacts::trianglePairCandidates(const double* w, std::uint32_t ta,
                                                                                   std::uint32_t tb,
                                                                                   KeepVertex&& keepVertex,
                                                                                   KeepEdges&& keepEdges,
                                                                                   bool onlyMarked) const {
  const Scratch& s = s_;
  auto vertexAgainst = [&](std::uint32_t owner, std::uint32_t t, bool marked) __attribute__((always_inline)) {
    const Aabb& triangleBox = s.triangleBoxes[t];
    const auto& tri = s.triangles[t];
    const auto& corner = s.triangleSlots[t];
    for (std::uint32_t i : s.ownedVertices[owner]) {
      if (i == kNone) break;
      if (marked && !s.escapedMark[i]) continue;
      if (!s.vertexBoxes[i].overlaps(triangleBox)) continue;
      if (meshNear(i, corner[0]) || meshNear(i, corner[1]) || meshNear(i, corner[2])) continue;
      if (w[s.particles[i]] + w[tri[0]] + w[tri[1]] + w[tri[2]] == 0.0) continue;
      keepVertex(i, t);
    }
  };
  vertexAgainst(ta, tb, onlyMarked);
  vertexAgainst(tb, ta, false);
  for (std::uint32_t a : s.ownedEdges[ta]) {
    if (a == kNone) break;
    if (onlyMarked && !s.edgeChanged[a]) continue;
    const Aabb& boxA = s.edgeBoxes[a];
    const auto& sa = s.edgeSlots[a];
    for (std::uint32_t b : s.ownedEdges[tb]) {
      if (b == kNone) break;
      if (!boxA.overlaps(s.edgeBoxes[b])) continue;
      const auto& sb = s.edgeSlots[b];
      if (meshNear(sa[0], sb[0]) || meshNear(sa[0], sb[1]) || meshNear(sa[1], sb[0]) || meshNear(sa[1], sb[1]))
        continue;
      const auto& ea = s.edges[a];
      const auto& eb = s.edges[b];
      if (w[ea[0]] + w[ea[1]] + w[eb[0]] + w[eb[1]] == 0.0) continue;
      keepEdges(std::min(a, b), std::max(a, b));
    }
  }
}

void SurfaceContacts::findCandidates(const Model& model, const SolverSettings& settings, const State& state, double h,
                                     int remainingSubsteps, double time, int teamSize) {
  Scratch& s = s_;
  ++broadPhaseRuns_;
  s.built = false;      // until the run completes (a kinematic path may throw on the way)
  s.nearValid = false;  // drawn on the candidates of the last run
  const double reach = surfaceReach(model, settings);
  // 1. The frame the boxes are drawn in. When the surface moves as a whole (its particles'
  //    velocities spread less about their mean v than half its length) and by more than half the
  //    thickness in the rest of the step, it moves with v and falls with gravity,
  //    c(j) = j h v + h^2 g j (j - 1) / 2 in the j-th substep of this run, so a surface that falls
  //    or slides as a whole keeps small boxes. Otherwise (settling, resting, crumpling) it stays, so
  //    that particles at rest stay in their boxes for as long as they rest, not only until a
  //    falling frame leaves them behind. Boxes overlap in it exactly when they do in the world (both
  //    are shifted by the same c(j) in substep j), so nothing is lost either way.
  s.frameSubsteps = 0;
  s.frameVelocity = Vec3::Zero();
  s.frameAcceleration = Vec3::Zero();
  s.frameStep = h;
  {
    std::size_t moving = 0;
    Vec3 mean = Vec3::Zero();
    for (std::size_t i = 0; i < s.particles.size(); ++i) {
      const ParticleIndex p = s.particles[i];
      if (s.kinematicPath[i] >= 0 || !(model.inverseMass[p] > 0.0)) continue;
      mean += state.velocity[p];
      ++moving;
    }
    if (moving > 0) mean /= static_cast<double>(moving);
    double spread = 0.0;  // m^2/s^2, the mean squared deviation from the mean
    for (std::size_t i = 0; i < s.particles.size(); ++i) {
      const ParticleIndex p = s.particles[i];
      if (s.kinematicPath[i] >= 0 || !(model.inverseMass[p] > 0.0)) continue;
      spread += (state.velocity[p] - mean).squaredNorm();
    }
    if (moving > 0) spread /= static_cast<double>(moving);
    // m/s: slower than this, the mean carries the surface less than half the thickness in the step
    const double leastSpeed = 0.5 * model.surfaceThickness / (remainingSubsteps * h);
    if (mean.allFinite() && mean.squaredNorm() > 4.0 * spread && mean.squaredNorm() > leastSpeed * leastSpeed) {
      s.frameVelocity = mean;
      s.frameAcceleration = settings.gravity;
    }
  }
  const double* w = model.inverseMass.data();
  // Everything below runs in one parallel region: the boxes and the leaves' cones in fixed shares
  // (each box and cone is computed alike on any thread), the refit and the cones' merging on one
  // thread, then the search. The search descends the triangle hierarchy against itself
  // (box_tree.h), cut into tasks that the threads take in any order, each into its own list;
  // sorting the pairs after gives the same candidates in the same order for any thread count. The
  // team may be smaller than asked (inside a caller's parallel region, or OMP_DYNAMIC), so every
  // list is cleared here, not by the thread that would fill it.
  const int threads = s.particles.size() >= kParallelQueries ? std::max(teamSize, 1) : 1;
  if (s.threadVertexTriangle.size() < static_cast<std::size_t>(threads)) {
    s.threadVertexTriangle.resize(threads);
    s.threadEdgeEdge.resize(threads);
  }
  for (int t = 0; t < threads; ++t) {
    s.threadVertexTriangle[t].clear();
    s.threadEdgeEdge[t].clear();
  }
  const std::size_t minTasks = threads > 1 ? 32 * static_cast<std::size_t>(threads) : 1;
  std::int64_t tasks = 0;
  // Each list stops growing at the bound, and an allocation failure is caught where it happens:
  // no exception may leave a parallel region. The pairs found are counted on, so an overflow is
  // seen alike on any thread count; the substep then gets no candidates and the step is refused.
  const std::size_t vertexCap = kMaxCandidatesPerQuery * s.particles.size();
  const std::size_t edgeCap = kMaxCandidatesPerQuery * s.edges.size();
  std::uint64_t vertexFound = 0, edgeFound = 0;
  int allocationFailed = 0;
  // A kinematic particle's path is a user function: called on this thread, outside the parallel
  // region, so that what it throws reaches the caller.
  if (s.kinematicSurface)
    for (std::size_t i = 0; i < s.particles.size(); ++i)
      if (s.kinematicPath[i] >= 0) drawParticleBox(model, settings, state, h, remainingSubsteps, time, reach, i);
#pragma omp parallel num_threads(threads) reduction(+ : vertexFound, edgeFound) reduction(| : allocationFailed)
  {
    const auto team = static_cast<std::size_t>(omp_get_num_threads());
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    auto share = [&](std::size_t count, std::size_t part) { return count * part / team; };
    // The kinematic particles' boxes were drawn before the region.
    const std::size_t particles = s.particles.size();
    for (std::size_t i = share(particles, thread); i < share(particles, thread + 1); ++i)
      if (s.kinematicPath[i] < 0) drawParticleBox(model, settings, state, h, remainingSubsteps, time, reach, i);
#pragma omp barrier
    for (std::size_t t = share(s.triangles.size(), thread); t < share(s.triangles.size(), thread + 1); ++t)
      drawTriangleBox(static_cast<std::uint32_t>(t), reach);
    for (std::size_t e = share(s.edges.size(), thread); e < share(s.edges.size(), thread + 1); ++e)
      drawEdgeBox(static_cast<std::uint32_t>(e), reach);
    // Patches that cannot touch themselves in this substep (normal cones, see the top) are skipped.
    const std::size_t nodes = s.triangleTree.nodeCount();
    leafCones(state, share(nodes, thread), share(nodes, thread + 1));
#pragma omp barrier
#pragma omp single
    {
      s.triangleTree.refit(s.triangleBoxes);
      findPatches();
      s.triangleTree.pairTasks(s.triangleTree, true, minTasks, s.triangleTasks, s.taskScratch, s.skipNode);
      tasks = static_cast<std::int64_t>(s.triangleTasks.size());
    }
    auto& vertexTriangle = s.threadVertexTriangle[thread];
    auto& edgeEdge = s.threadEdgeEdge[thread];
    auto keep = [&](auto& list, std::size_t cap, const auto& item) {
      if (list.size() >= cap || allocationFailed) return;
      try {
        list.push_back(item);
      } catch (const std::bad_alloc&) {
        allocationFailed = 1;
      }
    };
    // A vertex's (edge's) box lies in each of its triangles' boxes, so every pair whose boxes
    // overlap is reached from a pair of triangles whose boxes overlap: the vertex's (edges')
    // owners and the triangle. Each pair is reached once, from its owners.
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t k = 0; k < tasks; ++k) {
      s.triangleTree.pairs(
          s.triangleTree, true, s.triangleTasks[k], s.triangleBoxes, s.triangleBoxes,
          [&](std::uint32_t ta, std::uint32_t tb) {
            trianglePairCandidates(
                w, ta, tb,
                [&](std::uint32_t i, std::uint32_t t) {
                  ++vertexFound;
                  keep(vertexTriangle, vertexCap, Scratch::VertexTriangle{i, t});
                },
                [&](std::uint32_t a, std::uint32_t b) {
                  ++edgeFound;
                  keep(edgeEdge, edgeCap, std::array<std::uint32_t, 2>{a, b});
                },
                false);
          },
          s.skipNode);
    }
  }
  if (vertexFound > vertexCap || edgeFound > edgeCap || allocationFailed) {
    for (int t = 0; t < threads; ++t) {
      s.threadVertexTriangle[t].clear();
      s.threadEdgeEdge[t].clear();
    }
    s.vertexTriangle.clear();
    s.edgeEdge.clear();
    s.vertexTriangleAdded.clear();
    s.edgeEdgeAdded.clear();
    clearCandidateBoxes();
    s.built = false;
    overflow_ =
        "surface contact broad phase: " +
        (allocationFailed
             ? std::string("out of memory for its candidate pairs")
             : std::to_string(vertexFound) + " vertex-triangle and " + std::to_string(edgeFound) +
                   " edge-edge candidate pairs, above the bound of " + std::to_string(kMaxCandidatesPerQuery) +
                   " per vertex (" + std::to_string(vertexCap) + ") and per edge (" + std::to_string(edgeCap) + ")") +
        " (surface thickness " + std::to_string(model.surfaceThickness) +
        " m; a thickness near the mesh's edge length or a motion of the size of the cloth in one step "
        "makes every pair a candidate: lower the thickness or the time step)";
    return;
  }
  // The candidates sorted (see sortPairs), the scratch sized first, outside the parallel region.
  std::size_t vertexPairs = 0, edgePairs = 0;
  for (int t = 0; t < threads; ++t) {
    vertexPairs += s.threadVertexTriangle[t].size();
    edgePairs += s.threadEdgeEdge[t].size();
  }
  s.vertexTriangle.resize(vertexPairs);
  s.edgeEdge.resize(edgePairs);
  const std::size_t vertexKeys = s.particles.size(), edgeKeys = s.edges.size();
  const std::size_t triangleKeys = s.triangles.size();
  s.sortTotals.resize(static_cast<std::size_t>(threads));
  s.bucketPlace.resize(static_cast<std::size_t>(threads) * std::max({vertexKeys, edgeKeys, triangleKeys}));
  s.vertexTriangleScratch.resize(vertexPairs);
  s.edgeEdgeScratch.resize(edgePairs);
#pragma omp parallel num_threads(threads)
  {
    sortPairs(
        s.threadVertexTriangle, threads, vertexKeys, triangleKeys, s.sortTotals.data(), s.bucketPlace.data(),
        s.vertexTriangleScratch, s.vertexTriangle, [](const Scratch::VertexTriangle& pair) { return pair.vertex; },
        [](const Scratch::VertexTriangle& pair) { return pair.triangle; });
    sortPairs(
        s.threadEdgeEdge, threads, edgeKeys, edgeKeys, s.sortTotals.data(), s.bucketPlace.data(), s.edgeEdgeScratch,
        s.edgeEdge, [](const std::array<std::uint32_t, 2>& pair) { return pair[0]; },
        [](const std::array<std::uint32_t, 2>& pair) { return pair[1]; });
  }
  s.vertexTriangleAdded.clear();
  s.edgeEdgeAdded.clear();
  s.vertexTriangleApart.assign(vertexPairs, 0.0);
  s.edgeEdgeApart.assign(edgePairs, 0.0);
  s.apartNoted = false;
  listCandidateBoxes();
  s.built = true;
}

// The local update (see the top). The particles that left their boxes get new ones (for the rest
// of the step, in the frame, which stays), and so do their triangles and edges; the tree is
// refitted. Every candidate pair that names one of those vertices, triangles or edges is dropped
// and searched again from their triangles (each pair of triangles once); the pairs of the others
// keep their boxes and so their candidates. The list is then the one a run over every triangle
// would find with these boxes and the same skipped patches, sorted alike. Serial: it touches a few
// triangles, so any team gives the same list.
bool SurfaceContacts::updateCandidates(const Model& model, const SolverSettings& settings, const State& state, double h,
                                       int remainingSubsteps, double time, int teamSize) {
  Scratch& s = s_;
  const Vec3* x0 = state.previousPosition.data();
  const Vec3* x1 = state.position.data();
  s.escapedSlots.clear();
  const std::size_t most = s.particles.size() / kLocalUpdateShare;
  for (std::size_t i = 0; i < s.particles.size(); ++i) {
    const ParticleIndex p = s.particles[i];
    if (s.region[i].contains(x0[p]) && s.region[i].contains(x1[p])) continue;  // the frame stays: no shift
    // A non-finite position is left to the run over every triangle, as before this update existed.
    if (s.escapedSlots.size() == most || !x0[p].allFinite() || !x1[p].allFinite()) return false;
    s.escapedSlots.push_back(static_cast<std::uint32_t>(i));
  }
  if (s.escapedSlots.empty()) return false;
  const double reach = surfaceReach(model, settings);
  s.built = false;  // until the update completes (a kinematic path may throw on the way)
  for (std::uint32_t i : s.escapedSlots) drawParticleBox(model, settings, state, h, remainingSubsteps, time, reach, i);
  s.changedTriangles.clear();
  s.changedEdges.clear();
  for (std::uint32_t i : s.escapedSlots) {
    s.escapedMark[i] = 1;
    for (std::uint32_t k = s.slotTriangleStart[i]; k < s.slotTriangleStart[i + 1]; ++k) {
      const std::uint32_t t = s.slotTriangles[k];
      if (!s.triangleChanged[t]) s.changedTriangles.push_back(t);
      s.triangleChanged[t] = 1;
    }
    for (std::uint32_t k = s.slotEdgeStart[i]; k < s.slotEdgeStart[i + 1]; ++k) {
      const std::uint32_t e = s.slotEdges[k];
      if (!s.edgeChanged[e]) s.changedEdges.push_back(e);
      s.edgeChanged[e] = 1;
    }
  }
  for (std::uint32_t t : s.changedTriangles) drawTriangleBox(t, reach);
  for (std::uint32_t e : s.changedEdges) drawEdgeBox(e, reach);
  s.triangleTree.refitAbove(s.changedTriangles, s.triangleBoxes);
  // A changed vertex's (edge's) owner is one of its triangles, so every pair that names a changed
  // vertex, triangle or edge is reached from a changed triangle; a pair of two changed triangles
  // from the lower. Pairs within one skipped patch are left out, as the full search leaves them.
  // The changed triangles are shared out over the team, each thread into its own lists (sorted
  // together below, so any team finds the same pairs in the same order). An allocation failure is
  // caught where it happens: no exception may leave the parallel region.
  const double* w = model.inverseMass.data();
  const int threads = s.changedTriangles.size() >= kParallelUpdate ? std::max(teamSize, 1) : 1;
  if (s.threadVertexTriangle.size() < static_cast<std::size_t>(threads)) {
    s.threadVertexTriangle.resize(threads);
    s.threadEdgeEdge.resize(threads);
  }
  int allocationFailed = 0;
#pragma omp parallel num_threads(threads) reduction(| : allocationFailed)
  {
    const auto team = static_cast<std::size_t>(omp_get_num_threads());
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    auto& vertexTriangle = s.threadVertexTriangle[thread];
    auto& edgeEdge = s.threadEdgeEdge[thread];
    vertexTriangle.clear();
    edgeEdge.clear();
    const std::size_t changed = s.changedTriangles.size();
    try {
      for (std::size_t k = changed * thread / team; k < changed * (thread + 1) / team; ++k) {
        const std::uint32_t ta = s.changedTriangles[k];
        s.triangleTree.query(s.triangleBoxes[ta], s.triangleBoxes, [&](std::uint32_t tb) {
          if (tb == ta || (s.triangleChanged[tb] && tb < ta)) return;
          if (s.patchOf[ta] != kNone && s.patchOf[ta] == s.patchOf[tb]) return;
          // An unchanged tb has no changed vertex or edge: only ta's changed ones pair with it.
          trianglePairCandidates(
              w, ta, tb,
              [&](std::uint32_t i, std::uint32_t t) {
                const Scratch::VertexTriangle pair{i, t};
                if ((s.escapedMark[i] || s.triangleChanged[t]) &&
                    !std::binary_search(s.vertexTriangle.begin(), s.vertexTriangle.end(), pair))
                  vertexTriangle.push_back(pair);
              },
              [&](std::uint32_t a, std::uint32_t b) {
                const std::array<std::uint32_t, 2> pair{a, b};
                if ((s.edgeChanged[a] || s.edgeChanged[b]) &&
                    !std::binary_search(s.edgeEdge.begin(), s.edgeEdge.end(), pair))
                  edgeEdge.push_back(pair);
              },
              !s.triangleChanged[tb]);
        });
      }
    } catch (const std::bad_alloc&) {
      allocationFailed = 1;
    }
  }
  s.foundVertexTriangle.clear();
  s.foundEdgeEdge.clear();
  for (int t = 0; t < threads; ++t) {
    s.foundVertexTriangle.insert(s.foundVertexTriangle.end(), s.threadVertexTriangle[t].begin(),
                                 s.threadVertexTriangle[t].end());
    s.foundEdgeEdge.insert(s.foundEdgeEdge.end(), s.threadEdgeEdge[t].begin(), s.threadEdgeEdge[t].end());
  }
  for (std::uint32_t i : s.escapedSlots) s.escapedMark[i] = 0;
  for (std::uint32_t t : s.changedTriangles) s.triangleChanged[t] = 0;
  for (std::uint32_t e : s.changedEdges) s.edgeChanged[e] = 0;
  if (allocationFailed) return false;  // the run meets it again and refuses the step
  // The pairs found that no list holds yet join the added ones (sorted, each once). Those the
  // run's list holds stay there (the search above left them out), and so do its pairs that these
  // boxes no longer reach: the box test of every substep rejects them.
  auto add = [](auto& found, auto& added, auto& scratch) {
    std::sort(found.begin(), found.end());
    scratch.resize(added.size() + found.size());
    scratch.erase(std::set_union(added.begin(), added.end(), found.begin(), found.end(), scratch.begin()),
                  scratch.end());
    added.swap(scratch);
  };
  add(s.foundVertexTriangle, s.vertexTriangleAdded, s.vertexTriangleAddedScratch);
  add(s.foundEdgeEdge, s.edgeEdgeAdded, s.edgeEdgeAddedScratch);
  // Over the bound, or so many added that a run costs less than testing them in every substep:
  // the run over every triangle (which also finds an overflow and refuses the step).
  const std::size_t run = s.vertexTriangle.size() + s.edgeEdge.size();
  const std::size_t added = s.vertexTriangleAdded.size() + s.edgeEdgeAdded.size();
  if (s.vertexTriangle.size() + s.vertexTriangleAdded.size() > kMaxCandidatesPerQuery * s.particles.size() ||
      s.edgeEdge.size() + s.edgeEdgeAdded.size() > kMaxCandidatesPerQuery * s.edges.size() ||
      added > run / kAddedShare + kNarrowChunk)
    return false;
  // The substep boxes of the triangles and edges the new pairs name.
  for (const Scratch::VertexTriangle& pair : s.foundVertexTriangle)
    if (!s.triangleListed[pair.triangle]) {
      s.triangleListed[pair.triangle] = 1;
      s.candidateTriangles.push_back(pair.triangle);
    }
  for (const auto& pair : s.foundEdgeEdge)
    for (std::uint32_t e : pair)
      if (!s.edgeListed[e]) {
        s.edgeListed[e] = 1;
        s.candidateEdges.push_back(e);
      }
  s.built = true;  // the near list, drawn on the run's candidates, still holds
  ++broadPhaseUpdates_;
  return true;
}

// The candidate a contact was made from, as first << 32 | second (its place in the candidates'
// order): found again from the contact's particles, which name its vertex and triangle, or its
// two edges (make in collide). Called only when local updates added contacts.
std::uint64_t SurfaceContacts::candidateKey(const SurfaceContact& c) const {
  const Scratch& s = s_;
  if (c.kind == SurfaceContact::Kind::EdgeEdge)
    return std::uint64_t{edgeOf(c.particles[0], c.particles[1])} << 32 | edgeOf(c.particles[2], c.particles[3]);
  // The triangle: the first of its first corner's triangles with its corners in its order.
  const std::uint32_t corner = slotOf(c.particles[1]);
  std::uint32_t triangle = 0;
  for (std::uint32_t k = s.slotTriangleStart[corner]; k < s.slotTriangleStart[corner + 1]; ++k) {
    const std::array<ParticleIndex, 3>& t = s.triangles[s.slotTriangles[k]];
    if (t[0] == c.particles[1] && t[1] == c.particles[2] && t[2] == c.particles[3]) {
      triangle = s.slotTriangles[k];
      break;
    }
  }
  return std::uint64_t{slotOf(c.particles[0])} << 32 | triangle;
}

// The triangles and edges the run's candidates name, ascending: only their substep boxes are drawn.
void SurfaceContacts::listCandidateBoxes() {
  Scratch& s = s_;
  clearCandidateBoxes();
  for (const Scratch::VertexTriangle& pair : s.vertexTriangle) s.triangleListed[pair.triangle] = 1;
  for (const auto& pair : s.edgeEdge) s.edgeListed[pair[0]] = s.edgeListed[pair[1]] = 1;
  for (std::uint32_t t = 0; t < s.triangles.size(); ++t)
    if (s.triangleListed[t]) s.candidateTriangles.push_back(t);
  for (std::uint32_t e = 0; e < s.edges.size(); ++e)
    if (s.edgeListed[e]) s.candidateEdges.push_back(e);
}

void SurfaceContacts::clearCandidateBoxes() {
  Scratch& s = s_;
  for (std::uint32_t t : s.candidateTriangles) s.triangleListed[t] = 0;
  for (std::uint32_t e : s.candidateEdges) s.edgeListed[e] = 0;
  s.candidateTriangles.clear();
  s.candidateEdges.clear();
}

void SurfaceContacts::collide(const Model& model, const SolverSettings& settings, const State& state, double h,
                              int substep, double time, int teamSize) {
  contacts_.clear();
  inChunks_ = false;
  chunkCount_ = 0;
  contactCount_ = 0;
  joinStale_ = false;
  if (!active_) return;
  Scratch& s = s_;
  if (substep == 0) {
    broadPhaseRuns_ = 0;
    broadPhaseUpdates_ = 0;
    overflow_.clear();
  }
  if (!overflow_.empty()) return;  // an earlier substep overflowed: the step is refused
  const double thickness = model.surfaceThickness;
  const double reach = surfaceReach(model, settings);
  const double lateral = 0.5 * thickness;  // how far beside a triangle a vertex may be and still count
  const double cap = settings.maxDepenetrationVelocity * h;
  const Vec3* x0 = state.previousPosition.data();
  const Vec3* x1 = state.position.data();
  const Vec3* v = state.velocity.data();
  const double* w = model.inverseMass.data();
  // The candidates hold while every particle is inside the box it was given, in the broad phase's
  // frame at this substep, and every skipped patch's cone holds over this substep (see the top).
  // Checked with the narrow phase's boxes of each particle's path in this substep (x^n to the
  // prediction, padded by half the reach) and their unions per triangle and edge, each thread
  // over a fixed share; the answers (all hold, the largest motion) do not depend on the split.
  const bool checkCandidates = s.built && h == s.frameStep;
  const Vec3 frame = checkCandidates ? frameOffset(s.frameSubsteps) : Vec3::Zero();
  const int boxThreads = s.particles.size() >= kParallelQueries ? std::max(teamSize, 1) : 1;
  const std::size_t patchTriangles = checkCandidates ? skippedTriangles() : 0;
  int broken = 0;              // a particle left its box
  int conesBroken = 0;         // a skipped patch's cone no longer holds
  double largestMotion = 0.0;  // m^2, squared
  // How far the particles' substep boxes moved from those the near list was drawn on (m).
  const Aabb* anchor = s.nearValid ? s.anchorBoxes.data() : nullptr;
  double drift = 0.0;
  int unordered = 0;
  // Particles slower than the near list's room (below): while most are, the notes of pairs known
  // to be apart last (see the narrow phase).
  const double slowSquared = (reach / (4.0 * kNearSubsteps)) * (reach / (4.0 * kNearSubsteps));
  std::size_t slow = 0;
#pragma omp parallel num_threads(boxThreads) reduction(|                                 \
                                                       : broken, conesBroken, unordered) \
    reduction(max                                                                        \
              : largestMotion, drift) reduction(+ : slow)
  {
    const auto team = static_cast<std::size_t>(omp_get_num_threads());
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    auto share = [&](std::size_t count, std::size_t part) { return count * part / team; };
    const std::size_t particles = s.particles.size();
#ifdef PLIANT_HAVE_AVX2_KERNELS
    if (cpuHasAvx2()) {
      substepParticleBoxes(x0, x1, s.particles.data(), share(particles, thread), share(particles, thread + 1),
                           0.5 * reach, checkCandidates, s.region.data(), frame, s.substepVertex.data(), broken,
                           largestMotion, slowSquared, slow, anchor, drift, unordered);
    } else
#endif
    {
      for (std::size_t i = share(particles, thread); i < share(particles, thread + 1); ++i) {
        const ParticleIndex p = s.particles[i];
        Aabb& box = s.substepVertex[i];
        box = Aabb();
        box.add(x0[p]);
        box.add(x1[p]);
        box.inflate(0.5 * reach);
        const double motion = (x1[p] - x0[p]).squaredNorm();
        largestMotion = std::max(largestMotion, motion);
        slow += static_cast<std::size_t>(motion < slowSquared);
        if (checkCandidates && !(s.region[i].contains(x0[p] - frame) && s.region[i].contains(x1[p] - frame)))
          broken = 1;
        if (anchor) {
          const Vec3 lowMoved = box.min - anchor[i].min, highMoved = box.max - anchor[i].max;
          drift = std::max({drift, lowMoved.cwiseAbs().maxCoeff(), highMoved.cwiseAbs().maxCoeff()});
          if (!lowMoved.allFinite() || !highMoved.allFinite()) unordered = 1;
        }
      }
    }
    if (checkCandidates && !patchesHold(state, share(patchTriangles, thread), share(patchTriangles, thread + 1)))
      conesBroken = 1;
  }
  if (!(checkCandidates && !broken && !conesBroken)) {
    // Particles left their boxes while the cones hold and the frame stays: a local update, if few.
    const bool staticFrame = s.frameVelocity == Vec3::Zero() && s.frameAcceleration == Vec3::Zero();
    if (!(localUpdates_ && checkCandidates && !conesBroken && staticFrame &&
          updateCandidates(model, settings, state, h, settings.substeps - substep, time, teamSize)))
      findCandidates(model, settings, state, h, settings.substeps - substep, time, teamSize);
  }
  if (!overflow_.empty()) return;  // the step is refused (Solver::step)
  // The substep boxes of the triangles and edges that some candidate names (listed by the run).
  const std::size_t boxTriangles = s.candidateTriangles.size(), boxEdges = s.candidateEdges.size();
#pragma omp parallel num_threads(boxThreads)
  {
    const auto team = static_cast<std::size_t>(omp_get_num_threads());
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    auto share = [&](std::size_t count, std::size_t part) { return count * part / team; };
#ifdef PLIANT_HAVE_AVX2_KERNELS
    if (cpuHasAvx2()) {
      unionBoxes4<3>(s.substepVertex.data(), s.triangleSlots.data(), s.candidateTriangles.data(),
                     share(boxTriangles, thread), share(boxTriangles, thread + 1), s.substepTriangle.data());
      unionBoxes4<2>(s.substepVertex.data(), s.edgeSlots.data(), s.candidateEdges.data(), share(boxEdges, thread),
                     share(boxEdges, thread + 1), s.substepEdge.data());
    } else
#endif
    {
      for (std::size_t i = share(boxTriangles, thread); i < share(boxTriangles, thread + 1); ++i) {
        const std::uint32_t t = s.candidateTriangles[i];
        Aabb& box = s.substepTriangle[t];
        box = s.substepVertex[s.triangleSlots[t][0]];
        box.add(s.substepVertex[s.triangleSlots[t][1]]);
        box.add(s.substepVertex[s.triangleSlots[t][2]]);
      }
      for (std::size_t i = share(boxEdges, thread); i < share(boxEdges, thread + 1); ++i) {
        const std::uint32_t e = s.candidateEdges[i];
        Aabb& box = s.substepEdge[e];
        box = s.substepVertex[s.edgeSlots[e][0]];
        box.add(s.substepVertex[s.edgeSlots[e][1]]);
      }
    }
  }
  ++s.frameSubsteps;

  // The separating-axis rejections in front of the cubic hold for motions below a bound (ccd.h).
  const double motionBound = kSeparationMotion * lateral;
  const bool rejections = largestMotion <= motionBound * motionBound;
  const double separationReach = kSeparationReach * lateral;  // as sweptEdgeEdgeSeparated's and the vertex's
  // No contact is made between points farther apart than meet (m) at the time it is made: the
  // linear estimate's contacts are within the reach of the plane and the lateral distance beside
  // the triangle (within the reach of each other, for two edges), the cubic's within 1.125 of the
  // lateral distance. The estimate's crossing time is an estimate; a pair that it would take to
  // meet there while farther apart than that is left to the cubic. So a pair that stays farther
  // apart than meet over the substep makes nothing (the pairs known to be apart, below).
  const double meetSquared = (reach * reach + lateral * lateral) * (1.0 + 1e-9);
  const std::size_t contactCap = kMaxContactsPerParticle * s.particles.size();
  // Completes a contact whose particles, normal and weights are set: allowance, velocity, mass.
  auto finish = [&](SurfaceContact& c, std::vector<SurfaceContact>& out) {
    Vec3 before = Vec3::Zero(), velocity = Vec3::Zero();
    double inverseMassSum = 0.0;
    for (int k = 0; k < 4; ++k) {
      before += c.weights[k] * x0[c.particles[k]];
      velocity += c.weights[k] * v[c.particles[k]];
      inverseMassSum += c.weights[k] * c.weights[k] * w[c.particles[k]];
    }
    if (!(inverseMassSum > 0.0)) return;
    c.inverseMassSum = inverseMassSum;
    const double gapBefore = c.normal.dot(before) - thickness;
    if (gapBefore < 0.0) c.allowance = std::max(0.0, -gapBefore - cap);
    c.normalVelocity = c.normal.dot(velocity);
    out.push_back(c);
  };

  // The linear estimate below is exact while the pair's plane (the two edges' directions) does
  // not turn; when it rejects a pair, or cannot judge it (the normal turned by more than 90 degrees
  // or vanished at the prediction), the cubic coplanarity test (ccd.h) decides whether the vertex
  // (edge) passed through the triangle (across the edge) on the way. The estimate stays first
  // because it also makes the contacts of pairs that only come near, and costs less.
  auto vertexTriangle = [&](const Scratch::VertexTriangle& candidate, std::vector<SurfaceContact>& out) {
    const ParticleIndex p = s.particles[candidate.vertex];
    const auto& tri = s.triangles[candidate.triangle];
    const Vec3 &p0 = x0[p], &a0 = x0[tri[0]], &b0 = x0[tri[1]], &c0 = x0[tri[2]];
    const Vec3 &p1 = x1[p], &a1 = x1[tri[0]], &b1 = x1[tri[1]], &c1 = x1[tri[2]];
    const Vec3 n1 = (b1 - a1).cross(c1 - a1);
    const double length1 = n1.norm();
    if (!std::isfinite(length1)) return;
    // The contact is filled in only when one is made (most candidates make none).
    auto make = [&](const Vec3& bary, const Vec3& normal) {
      SurfaceContact c;
      c.kind = SurfaceContact::Kind::VertexTriangle;
      c.particles[0] = p;
      c.particles[1] = tri[0];
      c.particles[2] = tri[1];
      c.particles[3] = tri[2];
      c.weights[0] = 1.0;
      c.weights[1] = -bary[0];
      c.weights[2] = -bary[1];
      c.weights[3] = -bary[2];
      c.normal = normal;
      finish(c, out);
    };
    // Whether the vertex, at the prediction, is within `reach` of the plane and over the triangle
    // (within `lateral` beside it).
    auto nearAtEnd = [&](const Vec3& u, double d1) {
      if (std::abs(d1) >= reach) return false;
      const Vec3 bary = closestBarycentric(p1, a1, b1, c1);
      const Vec3 offset = p1 - (bary[0] * a1 + bary[1] * b1 + bary[2] * c1);
      if ((offset - u.dot(offset) * u).squaredNorm() > lateral * lateral) return false;
      make(bary, (d1 >= 0.0 ? 1.0 : -1.0) * u);
      return true;
    };
    const Vec3 u1 = length1 > 0.0 ? Vec3(n1 / length1) : Vec3::Zero();
    const Vec3 n0 = (b0 - a0).cross(c0 - a0);
    const double length0 = n0.norm();
    const Vec3 u0 = length0 > 0.0 ? Vec3(n0 / length0) : u1;
    const bool turned = !(length1 > 0.0) || u0.dot(u1) < 0.0;
    if (!turned) {
      // Linear estimate: the signed distance from the plane at the start and at the prediction.
      const double d0 = u0.dot(p0 - a0), d1 = u1.dot(p1 - a1);
      const double side = d0 >= 0.0 ? 1.0 : -1.0;
      if (side * d1 < reach) {
        // Where to take the closest point: where the path crosses the plane, or the prediction.
        const double tau = side * d1 < 0.0 ? d0 / (d0 - d1) : 1.0;
        const Vec3 pt = lerp(p0, p1, tau), at = lerp(a0, a1, tau), bt = lerp(b0, b1, tau), ct = lerp(c0, c1, tau);
        const Vec3 bary = closestBarycentric(pt, at, bt, ct);
        const Vec3 offset = pt - (bary[0] * at + bary[1] * bt + bary[2] * ct);
        const Vec3 nt = (bt - at).cross(ct - at);
        const double nLength = nt.norm();
        if (nLength > 0.0 && offset.squaredNorm() <= meetSquared) {
          const Vec3 ut = nt / nLength;
          if ((offset - ut.dot(offset) * ut).squaredNorm() <= lateral * lateral) {  // over the triangle
            make(bary, side * u1);
            return;
          }
        }
      }
    }
    // The cubic only where the pair is not separated along the triangle's normal at the start over
    // the whole substep (ccd.h: a conservative rejection; most pairs facing each other stop here).
    const SweptPoints start{p0, a0, b0, c0}, end{p1, a1, b1, c1};
    SweptHit hit;
    if (!(rejections && sweptVertexTriangleSeparated(start, end, u0, lateral)) &&
        sweptVertexTriangle(start, end, lateral, hit)) {
      make(Vec3(-hit.weights[1], -hit.weights[2], -hit.weights[3]), hit.normal);
      return;
    }
    // Turned and not passed through: held on the side it ends on if it ends near.
    if (turned && length1 > 0.0) nearAtEnd(u1, u1.dot(p1 - a1));
  };

  auto edgeEdge = [&](const std::array<std::uint32_t, 2>& candidate, std::vector<SurfaceContact>& out) {
    const auto& ea = s.edges[candidate[0]];
    const auto& eb = s.edges[candidate[1]];
    const Vec3 &pa0 = x0[ea[0]], &qa0 = x0[ea[1]], &pb0 = x0[eb[0]], &qb0 = x0[eb[1]];
    const Vec3 &pa1 = x1[ea[0]], &qa1 = x1[ea[1]], &pb1 = x1[eb[0]], &qb1 = x1[eb[1]];
    const Vec3 ua = qa1 - pa1, ub = qb1 - pb1;
    const Vec3 n1 = ua.cross(ub);
    const double lengthSquared1 = n1.squaredNorm();
    const double length1 = std::sqrt(lengthSquared1);  // as n1.norm()
    if (!std::isfinite(length1)) return;
    auto make = [&](double sa, double sb, const Vec3& normal) {
      SurfaceContact c;
      c.kind = SurfaceContact::Kind::EdgeEdge;
      c.particles[0] = ea[0];
      c.particles[1] = ea[1];
      c.particles[2] = eb[0];
      c.particles[3] = eb[1];
      c.weights[0] = 1.0 - sa;
      c.weights[1] = sa;
      c.weights[2] = -(1.0 - sb);
      c.weights[3] = -sb;
      c.normal = normal;
      finish(c, out);
    };
    // Closest points of the two lines at time tau (pa + sa da, pb + sb db), if within both edges:
    // a contact with that normal.
    auto closest = [&](double tau, const Vec3& normal) {
      const Vec3 pa = lerp(pa0, pa1, tau), pb = lerp(pb0, pb1, tau);
      const Vec3 da = lerp(qa0, qa1, tau) - pa, db = lerp(qb0, qb1, tau) - pb;
      const Vec3 r = pa - pb;
      const double A = da.dot(da), B = da.dot(db), C = db.dot(db), D = da.dot(r), E = db.dot(r);
      const double denominator = A * C - B * B;
      if (!(denominator > 0.0)) return false;
      const double sa = (B * E - C * D) / denominator;
      const double sb = (A * E - B * D) / denominator;
      if (!(sa >= 0.0 && sa <= 1.0 && sb >= 0.0 && sb <= 1.0)) return false;  // closest points off an edge
      if (!((r + sa * da - sb * db).squaredNorm() <= meetSquared)) return false;
      make(sa, sb, normal);
      return true;
    };
    const bool parallel1 = !notParallel(lengthSquared1, length1, ua, ub);  // at the prediction
    const Vec3 u1 = parallel1 ? Vec3::Zero() : Vec3(n1 / length1);
    const Vec3 n0 = (qa0 - pa0).cross(qb0 - pb0);
    const double lengthSquared0 = n0.squaredNorm();
    const double length0 = std::sqrt(lengthSquared0);
    const Vec3 u0 = notParallel(lengthSquared0, length0, qa0 - pa0, qb0 - pb0) ? Vec3(n0 / length0) : u1;
    const bool turned = parallel1 || u0.dot(u1) < 0.0;
    if (!turned) {
      // Linear estimate: the signed distance between the two lines, at the start and predicted.
      const double d0 = u0.dot(pa0 - pb0), d1 = u1.dot(pa1 - pb1);
      const double side = d0 >= 0.0 ? 1.0 : -1.0;
      if (side * d1 < reach && closest(side * d1 < 0.0 ? d0 / (d0 - d1) : 1.0, side * u1)) return;
    }
    const SweptPoints start{pa0, qa0, pb0, qb0}, end{pa1, qa1, pb1, qb1};
    SweptHit hit;
    if (!(rejections && sweptEdgeEdgeSeparated(start, end, u0, lateral)) && sweptEdgeEdge(start, end, lateral, hit)) {
      make(hit.weights[1], -hit.weights[3], hit.normal);
      return;
    }
    // Turned and not passed across: held on the side it ends on if it ends near.
    if (turned && !parallel1) {
      const double d1 = u1.dot(pa1 - pb1);
      if (std::abs(d1) < reach) closest(1.0, (d1 >= 0.0 ? 1.0 : -1.0) * u1);
    }
  };

  // The candidates are independent. They are cut into chunks (the run's vertex-triangle ones
  // first, then its edge-edge ones, then those the local updates added, in the same two parts)
  // that the threads take in any order, so a thread slowed by another process does not hold the
  // others up; each thread appends its contacts to its own list and notes where each chunk's are,
  // and the lists are read chunk by chunk (joinContacts): the contacts come in the candidates'
  // order for any team and any schedule.
  const std::size_t vt = s.vertexTriangle.size(), ee = s.edgeEdge.size();
  const std::size_t partSize[4] = {vt, ee, s.vertexTriangleAdded.size(), s.edgeEdgeAdded.size()};
  std::size_t partOffset[4], partChunkEnd[4];  // in `kept`; the chunks of parts 0 .. i
  for (std::size_t part = 0, offset = 0, chunkEnd = 0; part < 4; ++part) {
    partOffset[part] = offset;
    offset += partSize[part];
    chunkEnd += (partSize[part] + kNarrowChunk - 1) / kNarrowChunk;
    partChunkEnd[part] = chunkEnd;
  }
  const std::size_t chunks = partChunkEnd[3];
  const std::size_t candidates = partOffset[3] + partSize[3];
  const int threads = candidates >= kParallelCandidates ? std::max(teamSize, 1) : 1;
  if (s.kept.size() < candidates) s.kept.resize(candidates);
  if (s.nearList.size() < vt + ee) s.nearList.resize(vt + ee);
  if (s.nearCount.size() < chunks) s.nearCount.resize(chunks);
  if (s.chunkContacts.size() < chunks) s.chunkContacts.resize(chunks);
  if (s.chunkDropped.size() < chunks) s.chunkDropped.resize(chunks);
  // The near list. Most candidates of a cloth at rest or moving slowly stay more than the reach
  // apart for many substeps. When the list is drawn, each chunk lists its candidates whose substep
  // boxes come within nearGap of each other. While no particle's substep box has moved (a corner,
  // along an axis) by half of that from where it was then, the other candidates' boxes cannot
  // overlap (a triangle's or edge's box is a union of its particles' boxes, so it moved no more),
  // and the box test reads only the listed ones: the same pairs pass, in the same order. The
  // relative 1e-9 and 1e-12 of the largest coordinate are for the rounding (far above it).
  const bool nearHolds = s.nearValid && !unordered && 2.0 * drift * (1.0 + 1e-9) + 1e-12 * s.anchorScale < s.nearGap;
  bool drawNear = false;
  if (!nearHolds) {
    s.nearValid = false;
    // Room for about kNearSubsteps substeps of the fastest particle's motion in this one; where
    // that is more than kNearMost of the reach, most candidates would be listed (in contact-fold-64,
    // two thirds at 0.6 of the reach, 95 % at the whole), and the list is not drawn.
    const double gap = std::max(2.0 * kNearSubsteps * std::sqrt(largestMotion), kNearLeast * reach);
    if (gap <= kNearMost * reach && vt + ee > 0) {
      drawNear = true;
      s.nearValid = true;
      s.nearGap = gap;
      s.anchorBoxes.assign(s.substepVertex.begin(), s.substepVertex.end());
      double scale = 0.0;
      for (const Aabb& box : s.anchorBoxes)
        scale = std::max({scale, box.min.cwiseAbs().maxCoeff(), box.max.cwiseAbs().maxCoeff()});
      s.anchorScale = scale;
    }
  }
  if (s.threadContacts.size() < static_cast<std::size_t>(threads)) s.threadContacts.resize(threads);
  for (int t = 0; t < threads; ++t) s.threadContacts[t].clear();
  const auto chunkCount = static_cast<std::int64_t>(chunks);

  // The pairs known to be apart. A pair of the run that made nothing is noted with the gap
  // between its vertex and triangle (its two edges) along a fixed axis at the substep's start,
  // less meet: a lower bound of how far the pair's distance may still fall and stay above meet.
  // As no point of a later substep is farther from where it started this one than its travel
  // since then plus that substep's motion, the pair stays farther apart than meet, and makes
  // nothing, while the sum of its particles' travelReach stays below their travel now plus that
  // gap: such pairs are dropped after the box test, their tests never made. Noted only while the
  // particles move slowly (the near list is drawn, or nine in ten move less than its room), when a
  // note lasts; the notes of the run are dropped with it. Each candidate is noted and read only
  // by the thread of its chunk, and the sums are exact functions of the particles' motion, so the
  // contacts are the same for any team (and the same as without notes).
  const bool noteApartPairs = apartNotes_ && (nearHolds || drawNear || 10 * slow >= 9 * s.particles.size());
  const bool apartKnown = s.apartNoted && s.vertexTriangleApart.size() == vt && s.edgeEdgeApart.size() == ee;
  const bool trackTravel = apartKnown || noteApartPairs;
  const double meet = std::sqrt(meetSquared);
  const double* travelReach = s.travelReach.data();
  auto reachSum = [&](const std::uint32_t(&slot)[4]) {
    return ((travelReach[slot[0]] + travelReach[slot[1]]) + travelReach[slot[2]]) + travelReach[slot[3]];
  };
  auto vertexTriangleSlots = [&](const Scratch::VertexTriangle& pair, std::uint32_t(&slot)[4]) {
    const std::array<std::uint32_t, 3>& corners = s.triangleSlots[pair.triangle];
    slot[0] = pair.vertex;
    slot[1] = corners[0];
    slot[2] = corners[1];
    slot[3] = corners[2];
  };
  auto edgeEdgeSlots = [&](const std::array<std::uint32_t, 2>& pair, std::uint32_t(&slot)[4]) {
    slot[0] = s.edgeSlots[pair[0]][0];
    slot[1] = s.edgeSlots[pair[0]][1];
    slot[2] = s.edgeSlots[pair[1]][0];
    slot[3] = s.edgeSlots[pair[1]][1];
  };
  // Drops from kept[0, end) the candidates known to be apart (counted as chunk c's); returns the
  // new end.
  auto dropApart = [&](std::uint32_t* kept, std::size_t end, bool vertexPairs, std::size_t c) {
    const double* apart = vertexPairs ? s.vertexTriangleApart.data() : s.edgeEdgeApart.data();
    std::size_t left = 0;
    std::uint32_t slot[4];
    for (std::size_t i = 0; i < end; ++i) {
      const std::uint32_t k = kept[i];
      if (vertexPairs) vertexTriangleSlots(s.vertexTriangle[k], slot);
      else edgeEdgeSlots(s.edgeEdge[k], slot);
      kept[left] = k;
      left += static_cast<std::size_t>(!(reachSum(slot) < apart[k]));
    }
    s.chunkDropped[c] = static_cast<std::uint32_t>(end - left);
    return left;
  };
  // Notes candidate k of the run (its particles' slots and positions at the start, the first
  // `nearCount` of them its vertex or edge a) when it made nothing: the gap along the axis from
  // the nearest point of the triangle (edge b) to the vertex (edge a's nearest point).
  auto noteApart = [&](bool vertexPairs, std::uint32_t k) {
    double& apart = (vertexPairs ? s.vertexTriangleApart : s.edgeEdgeApart)[k];
    std::uint32_t slot[4];
    Vec3 point[4];
    Vec3 axis;
    int nearCount;
    if (vertexPairs) vertexTriangleSlots(s.vertexTriangle[k], slot);
    else edgeEdgeSlots(s.edgeEdge[k], slot);
    if (reachSum(slot) < -apart) return;  // too near when last measured, and not moved enough since
    if (vertexPairs) {
      for (int j = 0; j < 4; ++j) point[j] = x0[s.particles[slot[j]]];
      const Vec3 weights = triangleWeights(closestOnTriangle(point[0], point[1], point[2], point[3]));
      axis = point[0] - (weights[0] * point[1] + weights[1] * point[2] + weights[2] * point[3]);
      nearCount = 1;
    } else {
      for (int j = 0; j < 4; ++j) point[j] = x0[s.particles[slot[j]]];
      const auto [sa, sb] = closestOnSegments(point[0], point[1], point[2], point[3]);
      axis = lerp(point[0], point[1], sa) - lerp(point[2], point[3], sb);
      nearCount = 2;
    }
    const double length = axis.norm();
    if (!(length > 0.0)) return;
    axis /= length;
    double nearLow = std::numeric_limits<double>::infinity();
    double farHigh = -nearLow, scale = 0.0;
    for (int j = 0; j < 4; ++j) {
      const double along = axis.dot(point[j]);
      if (j < nearCount) nearLow = std::min(nearLow, along);
      else farHigh = std::max(farHigh, along);
      scale = std::max(scale, point[j].cwiseAbs().maxCoeff());
    }
    const double travelSum = ((s.travel[slot[0]] + s.travel[slot[1]]) + s.travel[slot[2]]) + s.travel[slot[3]];
    // Spare for the rounding of the projections and of the sums.
    const double room = (nearLow - farHigh) - meet - 1e-12 * scale - 1e-9 * (meet + travelSum);
    // A pair nearer than meet is not measured again before its particles have moved (summed) by
    // what it lacks (a note of when, negative): only a guess, as the distance along another axis
    // may be larger, so it decides only when to look, never what to drop.
    if (room > 0.0) apart = travelSum + room;
    else if (room <= 0.0) apart = -(travelSum - room);  // NaN: neither
  };
#pragma omp parallel num_threads(threads)
  {
    const auto thread = static_cast<std::uint32_t>(omp_get_thread_num());
    std::vector<SurfaceContact>& out = s.threadContacts[thread];
    if (trackTravel) {
      // How far each particle may be from where it started a substep seen before (the pairs known
      // to be apart): the lengths its start moved by since, summed, plus this substep's motion.
      const auto team = static_cast<std::size_t>(omp_get_num_threads());
      const std::size_t particles = s.particles.size();
      for (std::size_t i = particles * thread / team; i < particles * (thread + 1) / team; ++i) {
        const ParticleIndex p = s.particles[i];
        if (!s.travelStarted) s.travelFrom[i] = x0[p];
        s.travel[i] += (x0[p] - s.travelFrom[i]).norm();
        s.travelFrom[i] = x0[p];
        s.travelReach[i] = s.travel[i] + (x1[p] - x0[p]).norm();
      }
#pragma omp barrier
    }
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t chunk = 0; chunk < chunkCount; ++chunk) {
      Scratch::ChunkContacts& where = s.chunkContacts[static_cast<std::size_t>(chunk)];
      where.thread = thread;
      where.begin = out.size();
      s.chunkDropped[static_cast<std::size_t>(chunk)] = 0;
      // The substep boxes first: most candidates stop there, without a call. The ones that pass
      // are listed first (in the chunk's part of `kept`), without a branch per candidate: which
      // pass is hard to predict, and a mispredicted branch costs more than the box test. The
      // test reads the chunk's candidates, or those of them in the near list (see above), which
      // is drawn in the chunk's part of nearList (the run's candidates only: the added ones are
      // all read).
      const auto c = static_cast<std::size_t>(chunk);
      const std::size_t part = c < partChunkEnd[0] ? 0 : c < partChunkEnd[1] ? 1 : c < partChunkEnd[2] ? 2 : 3;
      const bool vertexChunk = part % 2 == 0, addedChunk = part >= 2;
      BoxTestInput in;
      in.first = (c - (part == 0 ? 0 : partChunkEnd[part - 1])) * kNarrowChunk;
      in.count = std::min(partSize[part], in.first + kNarrowChunk) - in.first;
      if (!addedChunk) {
        std::uint32_t* const near = s.nearList.data() + partOffset[part] + in.first;
        if (nearHolds) {
          in.listed = near;
          in.count = s.nearCount[c];
        } else if (drawNear) {
          in.near = near;
          in.gap = s.nearGap;
        }
      }
      std::uint32_t* const kept = s.kept.data() + partOffset[part] + in.first;
      const std::vector<Scratch::VertexTriangle>& vertexPairs = addedChunk ? s.vertexTriangleAdded : s.vertexTriangle;
      const std::vector<std::array<std::uint32_t, 2>>& edgePairs = addedChunk ? s.edgeEdgeAdded : s.edgeEdge;
      const bool notes = apartKnown && !addedChunk;  // the run's candidates only
      const bool noting = notes && noteApartPairs;
      // The narrow test of the candidate at kept[i], noted when it made nothing; and of the four
      // from kept[i] after a lane screen (`may`: the lanes that may make something).
      auto testKept = [&](auto& narrow, const auto& pairs, bool vertexKind, std::size_t i) {
        const std::size_t before = out.size();
        narrow(pairs[kept[i]], out);
        if (noting && out.size() == before) noteApart(vertexKind, kept[i]);
      };
      [[maybe_unused]] auto testLanes = [&](auto& narrow, const auto& pairs, bool vertexKind, std::size_t i,
                                            unsigned may) {
        for (unsigned lane = 0; lane < 4; ++lane) {
          if (may & (1u << lane)) testKept(narrow, pairs, vertexKind, i + lane);
          else if (noting) noteApart(vertexKind, kept[i + lane]);
        }
      };
      if (vertexChunk) {
        std::size_t end = keepOverlappingBoxes(
            in, [&](std::size_t k) -> const Aabb& { return s.substepVertex[vertexPairs[k].vertex]; },
            [&](std::size_t k) -> const Aabb& { return s.substepTriangle[vertexPairs[k].triangle]; }, kept);
        if (notes) end = dropApart(kept, end, true, c);
        std::size_t i = 0;
#ifdef PLIANT_HAVE_AVX2_KERNELS
        // Four at a time first: the pairs far from the plane and separated stop there.
        if (vertexLanes_ && cpuHasAvx2()) {
          for (; i + 4 <= end; i += 4) {
            ParticleIndex vertices[4];
            const std::array<ParticleIndex, 3>* triangles[4];
            for (std::size_t lane = 0; lane < 4; ++lane) {
              const Scratch::VertexTriangle& pair = vertexPairs[kept[i + lane]];
              vertices[lane] = s.particles[pair.vertex];
              triangles[lane] = &s.triangles[pair.triangle];
            }
            const unsigned may =
                vertexTriangleMayMake4(x0, x1, vertices, triangles, reach, separationReach, rejections);
            testLanes(vertexTriangle, vertexPairs, true, i, may);
          }
        }
#endif
        for (; i < end; ++i) testKept(vertexTriangle, vertexPairs, true, i);
      } else {
        std::size_t end = keepOverlappingBoxes(
            in, [&](std::size_t k) -> const Aabb& { return s.substepEdge[edgePairs[k][0]]; },
            [&](std::size_t k) -> const Aabb& { return s.substepEdge[edgePairs[k][1]]; }, kept);
        if (notes) end = dropApart(kept, end, false, c);
        std::size_t i = 0;
#ifdef PLIANT_HAVE_AVX2_KERNELS
        // Four at a time first: the pairs that make nothing (most) stop there.
        if (cpuHasAvx2()) {
          for (; i + 4 <= end; i += 4) {
            const std::array<ParticleIndex, 2>* const edges[4][2] = {
                {&s.edges[edgePairs[kept[i]][0]], &s.edges[edgePairs[kept[i]][1]]},
                {&s.edges[edgePairs[kept[i + 1]][0]], &s.edges[edgePairs[kept[i + 1]][1]]},
                {&s.edges[edgePairs[kept[i + 2]][0]], &s.edges[edgePairs[kept[i + 2]][1]]},
                {&s.edges[edgePairs[kept[i + 3]][0]], &s.edges[edgePairs[kept[i + 3]][1]]}};
            const unsigned may = edgeEdgeMayMake4(x0, x1, edges, reach, separationReach, rejections);
            testLanes(edgeEdge, edgePairs, false, i, may);
          }
        }
#endif
        for (; i < end; ++i) testKept(edgeEdge, edgePairs, false, i);
      }
      if (drawNear && !addedChunk) s.nearCount[c] = static_cast<std::uint32_t>(in.nearCount);
      where.end = out.size();
    }
  }
  if (trackTravel) s.travelStarted = true;
  if (noteApartPairs) s.apartNoted = true;
  for (std::size_t c = 0; c < chunks; ++c) apartDropped_ += s.chunkDropped[c];
  // The bound is checked on the joined count, so it holds alike for any thread count.
  std::size_t found = 0;
  for (int t = 0; t < threads; ++t) found += s.threadContacts[t].size();
  if (found > contactCap) {
    overflow_ = "surface contacts: " + std::to_string(found) + " contacts in one substep, above the bound of " +
                std::to_string(contactCap) + " (" + std::to_string(kMaxContactsPerParticle) +
                " per particle of the self-colliding cloths; surface thickness " + std::to_string(thickness) +
                " m): lower the thickness";
    return;
  }
  joinContacts(partChunkEnd);
}

// The contacts in the candidates' order, whichever list held them: the run's vertex-triangle ones
// merged with the added ones by candidate, then the edge-edge ones (so that a solver that has
// added candidates makes the contacts of one that has just run, in the same order). Parts 0 - 3 of
// the chunks as collide cut them; partChunkEnd[i] ends part i's chunks. Without added candidates
// the chunks are in that order already: the contacts stay in the threads' lists (a copy into one
// list ran on the calling thread while the others waited).
// Out of collide, whose narrow tests the compiler inlines more fully without it.
void SurfaceContacts::joinContacts(const std::size_t partChunkEnd[4]) {
  Scratch& s = s_;
  if (partChunkEnd[3] == partChunkEnd[1]) {
    inChunks_ = true;
    chunkCount_ = partChunkEnd[1];
    contactCount_ = 0;
    for (std::size_t chunk = 0; chunk < chunkCount_; ++chunk)
      contactCount_ += s.chunkContacts[chunk].end - s.chunkContacts[chunk].begin;
    joinStale_ = true;
    return;
  }
  auto partChunks = [&](std::size_t part) {
    return std::pair(part == 0 ? 0 : partChunkEnd[part - 1], partChunkEnd[part]);
  };
  auto gather = [&](std::size_t part, std::vector<Scratch::KeyedContact>& into) {
    into.clear();
    const auto [first, end] = partChunks(part);
    for (std::size_t chunk = first; chunk < end; ++chunk) {
      const Scratch::ChunkContacts& where = s.chunkContacts[chunk];
      for (std::size_t k = where.begin; k < where.end; ++k)
        into.push_back({candidateKey(s.threadContacts[where.thread][k]), &s.threadContacts[where.thread][k]});
    }
  };
  for (std::size_t kind = 0; kind < 2; ++kind) {
    gather(kind + 2, s.addedContacts);
    if (s.addedContacts.empty()) {
      const auto [first, end] = partChunks(kind);
      for (std::size_t chunk = first; chunk < end; ++chunk) {
        const Scratch::ChunkContacts& where = s.chunkContacts[chunk];
        const std::vector<SurfaceContact>& list = s.threadContacts[where.thread];
        contacts_.insert(contacts_.end(), list.begin() + static_cast<std::ptrdiff_t>(where.begin),
                         list.begin() + static_cast<std::ptrdiff_t>(where.end));
      }
      continue;
    }
    gather(kind, s.runContacts);
    std::size_t a = 0, b = 0;
    while (a < s.runContacts.size() || b < s.addedContacts.size())
      contacts_.push_back(b == s.addedContacts.size() ||
                                  (a < s.runContacts.size() && s.runContacts[a].key < s.addedContacts[b].key)
                              ? *s.runContacts[a++].contact
                              : *s.addedContacts[b++].contact);
  }
  contactCount_ = contacts_.size();
}

template <class Self, class F>
void SurfaceContacts::forEachContact(Self& self, F&& f) {
  if (!self.inChunks_) {
    for (auto& c : self.contacts_)
      if (!f(c)) return;
    return;
  }
  for (std::size_t chunk = 0; chunk < self.chunkCount_; ++chunk) {
    const Scratch::ChunkContacts& where = self.s_.chunkContacts[chunk];
    auto& list = self.s_.threadContacts[where.thread];
    for (std::size_t k = where.begin; k < where.end; ++k)
      if (!f(list[k])) return;
  }
}

const std::vector<SurfaceContact>& SurfaceContacts::contacts() const {
  if (!inChunks_) return contacts_;
  // Readers of a solver between steps may ask from several threads at once.
  const std::lock_guard<std::mutex> lock(joinMutex_);
  if (joinStale_) {
    contacts_.clear();
    forEachContact(*this, [&](const SurfaceContact& c) {
      contacts_.push_back(c);
      return true;
    });
    joinStale_ = false;
  }
  return contacts_;
}

bool SurfaceContacts::project(const Model& model, const SolverSettings& settings, State& state, StepTrace* trace) {
  const double* w = model.inverseMass.data();
  Vec3* x = state.position.data();
  const Vec3* xPrev = state.previousPosition.data();
  const double thickness = model.surfaceThickness;
  const double mu = model.surfaceContactMaterial.staticFriction;
  const double kinetic = settings.dynamicFrictionInVelocityPass ? 0.0 : model.surfaceContactMaterial.dynamicFriction;
  joinStale_ = inChunks_;  // the multipliers and friction change
  bool found = false;
  forEachContact(*this, [&](SurfaceContact& c) {
    Vec3 r = Vec3::Zero();
    for (int k = 0; k < 4; ++k) r += c.weights[k] * x[c.particles[k]];
    const double C = c.normal.dot(r) - thickness + c.allowance;
    if (!(C < 0.0) && !(c.lambda > 0.0)) return true;  // projected Gauss-Seidel, as the families
    const double deltaLambda = std::max(-C / c.inverseMassSum, -c.lambda);
    c.lambda += deltaLambda;
    for (int k = 0; k < 4; ++k) x[c.particles[k]] += (c.weights[k] * w[c.particles[k]] * deltaLambda) * c.normal;
    // Friction on the relative motion of this substep.
    Vec3 relative = Vec3::Zero();
    for (int k = 0; k < 4; ++k) relative += c.weights[k] * (x[c.particles[k]] - xPrev[c.particles[k]]);
    const double limit = c.inverseMassSum * c.lambda;
    const Vec3 shift =
        frictionShift(relative - c.normal.dot(relative) * c.normal, mu * limit, kinetic * limit, c.friction);
    for (int k = 0; k < 4; ++k) x[c.particles[k]] -= (c.weights[k] * w[c.particles[k]] / c.inverseMassSum) * shift;
    if (trace) {
      for (ParticleIndex p : c.particles) {
        if (!trace->check(state, p, StepTrace::Culprit::SurfaceContact)) continue;
        trace->surfaceContact = c;
        found = true;
        return false;
      }
    }
    return true;
  });
  return !found;
}

void SurfaceContacts::velocityPass(const Model& model, const SolverSettings& settings, State& state, double h) const {
  const double* w = model.inverseMass.data();
  Vec3* v = state.velocity.data();
  const double restingSpeed = 2.0 * settings.gravity.norm() * h;
  const bool friction = settings.dynamicFrictionInVelocityPass;
  forEachContact(*this, [&](const SurfaceContact& c) {
    if (!(c.lambda > 0.0)) return true;
    Vec3 relative = Vec3::Zero();
    for (int k = 0; k < 4; ++k) relative += c.weights[k] * v[c.particles[k]];
    const Vec3 dv = velocityPassChange(relative, c.normal, c.inverseMassSum * c.lambda, c.normalVelocity,
                                       model.surfaceContactMaterial, friction, h, restingSpeed);
    for (int k = 0; k < 4; ++k) v[c.particles[k]] += (c.weights[k] * w[c.particles[k]] / c.inverseMassSum) * dv;
    return true;
  });
}

}  // namespace pliant::detail

namespace pliant {

std::size_t surfaceCandidateBound(std::size_t particles, std::size_t edges) {
  return detail::kMaxCandidatesPerQuery * (particles + edges);
}

std::size_t surfaceContactBound(std::size_t particles) { return detail::kMaxContactsPerParticle * particles; }

}  // namespace pliant
