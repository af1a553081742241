package pkgmerge

import (
	"fmt"
	"reflect"
	"strings"

	kptfilev1 "github.com/kptdev/kpt/pkg/api/kptfile/v1"

	"github.com/kptbot/kptbot/engine/kptpkg"
)

// MergePipeline 3-way merges the pipeline of a Kptfile by function
// identity (its name, else its image or exec without tag), instead of kpt's
// list replacement: a function added or reconfigured locally survives an
// upstream pipeline change, upstream additions and removals apply, and a
// function changed on both sides takes the upstream's version and is
// reported as a conflict.
func MergePipeline(origin, local, updated *kptfilev1.Pipeline) (*kptfilev1.Pipeline, []Conflict) {
	var conflicts []Conflict
	mut, c1 := mergeFunctions("mutators", kptpkg.PipelineFunctions(origin, true), kptpkg.PipelineFunctions(local, true), kptpkg.PipelineFunctions(updated, true))
	val, c2 := mergeFunctions("validators", kptpkg.PipelineFunctions(origin, false), kptpkg.PipelineFunctions(local, false), kptpkg.PipelineFunctions(updated, false))
	conflicts = append(append(conflicts, c1...), c2...)
	if len(mut) == 0 && len(val) == 0 {
		return nil, conflicts
	}
	return &kptfilev1.Pipeline{Mutators: mut, Validators: val}, conflicts
}

// fnKey identifies a function across versions of a pipeline.
func fnKey(f kptfilev1.Function) string {
	if f.Name != "" {
		return "name:" + f.Name
	}
	ref := f.Image
	if ref == "" {
		return "exec:" + f.Exec
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return "image:" + ref
}

type keyedFns struct {
	keys []string
	byK  map[string]kptfilev1.Function
}

func keyed(list []kptfilev1.Function) keyedFns {
	k := keyedFns{byK: map[string]kptfilev1.Function{}}
	seen := map[string]int{}
	for _, f := range list {
		key := fnKey(f)
		seen[key]++
		if seen[key] > 1 {
			key = fmt.Sprintf("%s#%d", key, seen[key])
		}
		k.keys = append(k.keys, key)
		k.byK[key] = f
	}
	return k
}

func mergeFunctions(field string, origin, local, updated []kptfilev1.Function) ([]kptfilev1.Function, []Conflict) {
	o, l, u := keyed(origin), keyed(local), keyed(updated)
	var out []kptfilev1.Function
	var conflicts []Conflict
	emitted := map[string]bool{}
	// Functions only the local package has keep their place: they are
	// emitted right after the function that precedes them locally.
	localOnlyAfter := map[string][]string{}
	prev := ""
	for _, k := range l.keys {
		_, inO := o.byK[k]
		_, inU := u.byK[k]
		if !inO && !inU {
			localOnlyAfter[prev] = append(localOnlyAfter[prev], k)
		} else {
			prev = k
		}
	}
	emitLocalOnly := func(after string) {
		for _, k := range localOnlyAfter[after] {
			if !emitted[k] {
				out = append(out, l.byK[k])
				emitted[k] = true
			}
		}
	}
	emitLocalOnly("")
	for _, k := range u.keys {
		uf := u.byK[k]
		of, inO := o.byK[k]
		lf, inL := l.byK[k]
		switch {
		case inO && !inL:
			// Deleted locally: stays deleted.
		case !inO && !inL:
			out = append(out, uf)
		case !inO && inL:
			// Added on both sides.
			out = append(out, uf)
			if !reflect.DeepEqual(lf, uf) {
				conflicts = append(conflicts, fnConflict(field, k, lf, uf))
			}
		case reflect.DeepEqual(of, lf):
			out = append(out, uf)
		case reflect.DeepEqual(of, uf):
			out = append(out, lf) // local reconfiguration survives
		default:
			out = append(out, uf)
			if !reflect.DeepEqual(lf, uf) {
				conflicts = append(conflicts, fnConflict(field, k, lf, uf))
			}
		}
		emitted[k] = true
		if inL {
			emitLocalOnly(k)
		}
	}
	// Functions upstream removed: dropped unless the local package changed
	// them, in which case the local edit is kept.
	for _, k := range l.keys {
		if emitted[k] {
			continue
		}
		lf := l.byK[k]
		of, inO := o.byK[k]
		if inO && reflect.DeepEqual(of, lf) {
			emitted[k] = true
			emitLocalOnly(k)
			continue
		}
		out = append(out, lf)
		emitted[k] = true
		emitLocalOnly(k)
	}
	return out, conflicts
}

func fnConflict(field, key string, local, upstream kptfilev1.Function) Conflict {
	return Conflict{
		File:     kptpkg.KptfileName,
		Resource: "Kptfile pipeline." + field + " " + strings.SplitN(key, ":", 2)[1],
		Field:    "pipeline." + field + "[" + key + "]",
		Local:    describeFn(local),
		Upstream: describeFn(upstream),
	}
}

func describeFn(f kptfilev1.Function) string {
	s := f.Image + f.Exec
	if f.ConfigPath != "" {
		s += " configPath=" + f.ConfigPath
	}
	if len(f.ConfigMap) > 0 {
		s += fmt.Sprintf(" configMap=%v", f.ConfigMap)
	}
	return s
}
