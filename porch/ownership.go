package porch

// Annotations kptbot sets on a package's Kptfile to remember which
// PackageVariant owns it and what to do when that variant is gone (Porch
// keeps both on the PackageRevision object; git has only the files).
const (
	OwnerAnnotation          = "kptbot.dev/package-variant"
	DeletionPolicyAnnotation = "kptbot.dev/deletion-policy"
)

// UpdateWorkspace is the workspace of the bot's variant updates: one
// draft, and so one open change, per downstream package.
const UpdateWorkspace = "kptbot-update"

// UpdateBranch is the branch of the bot's variant updates of pkg.
func UpdateBranch(pkg string) string { return DraftBranch(pkg, UpdateWorkspace) }
