package engine
import ("testing";"context";"os";"path/filepath";goruntime "runtime";"runtime/pprof";"github.com/kptbot/kptbot/fetch")
func TestDbgGet(t *testing.T) {
	goruntime.MemProfileRate = 4096
	dest := filepath.Join(t.TempDir(), "p")
	if _, err := Get(context.Background(), fetch.NewClient(), dest, GetOptions{Repo: "file:///tmp/ur/up10.git", Dir: "pkg", Version: "v1"}); err != nil { t.Fatal(err) }
	f, _ := os.Create("/tmp/heap.out"); pprof.Lookup("allocs").WriteTo(f, 0); f.Close()
}
