// Package pkgmerge is kpt's 3-way merge of a package update: resources
// matched across origin, updated and local and merged field by field,
// Kptfile pipelines, non-KRM files, subpackages added or deleted on
// either side, and the conflicts where upstream won.
package pkgmerge
