// Package porch holds Porch's naming and layout rules, pure and free of
// I/O, so that every part of kptbot that names or parses a ref, a revision,
// a task or a commit trailer agrees with Porch (pkg/externalrepo/git and
// api/porch/v1alpha1) and with each other:
//
//	drafts/<package>/<workspace>            branch of a Draft
//	proposed/<package>/<workspace>          branch of a Proposed revision
//	deletionProposed/<package>/v<N>         branch of a DeletionProposed revision
//	<package>/v<N>                          tag of published revision N
//
// Commit messages end with a trailer line
//
//	kpt:{"package":...,"workspaceName":...,"revision":...,"task":{...}}
//
// whose task is Porch's v1alpha1 Task JSON (see Task).
//
// Names here are the short names forges use (a branch "drafts/a/ws", a tag
// "a/v1"); TagRef and BranchRef give the full git ref names.
package porch
