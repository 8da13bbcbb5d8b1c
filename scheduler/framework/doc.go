// Package framework is the scheduler's plugin framework, in the shape of
// kube-scheduler's (STYLE.md): a root Plugin interface, one small interface
// per extension point (PreFilter, Filter, Assign, PreScore, Score, Reserve,
// Permit, Bind, PostFilter, Audit), typed statuses carrying a reason for
// every refused node, a registry that refuses duplicate names, and a
// profile (plugins, weights, args) loaded from YAML.
//
// Differences from kube-scheduler, and why:
//   - Filter, Assign and Score run fused in one pass per node, Nomad-style,
//     so a node is touched once per cycle; PreScore therefore runs before
//     the pass, once per cycle, over the whole snapshot (its job is the
//     per-cycle precomputation: PromQL caches, target workloads).
//   - Assign is an extra point: exactly one plugin picks the devices (and
//     partition slots) a task gets on a node. Device choice and node score
//     are coupled (FGD scores a node by its best device), so the Assign
//     plugin runs before Score and Score plugins see its choice.
//   - Scores are float64 in [0, 100] (not int64): the fragmentation delta
//     needs the precision, integer rounding creates the ties that
//     REFERENCE.md shows move results by points. Weighted sums as in kube.
//   - Feasibility and score of (request shape, node) are memoised and
//     reused until the node's version or the framework epoch changes — the
//     equivalence idea of Nomad's computed node classes. A plugin whose
//     answer depends on anything else declares itself Volatile, which turns
//     the memo off; one whose inputs change (LoadAware's PromQL cache,
//     Fragmentation's workload) calls Handle.Invalidate.
//   - Weights and enable/disable change at run time: the compiled plugin
//     lists are an immutable value swapped atomically, so readers never
//     lock; a cycle uses the lists it started with.
package framework
