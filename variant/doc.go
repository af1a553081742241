// Package variant is Porch's PackageVariant on kptbot: the variant's
// mutations of a package (package context, labels and annotations,
// pipeline, config injection) and the plan that converges one variant's
// downstream package with its upstream. Both appliers use it: plain git
// (reconcile, Porch drafts on git) and forges (the bot, branch + change).
package variant
