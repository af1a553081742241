package server

import (
	"testing"

	"github.com/kptbot/kptbot/bot"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/forge/forgetest"
	"github.com/kptbot/kptbot/internal/fleettest"
)

// The server's tests run the whole bot behind the webhook server: these
// are the packages and repositories they seed.

const kptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: ns
pipeline:
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1
      configMap:
        namespace: team-a
`

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: team-a
data:
  replicas: "1"
`

var (
	blueprints    = fleettest.Upstream
	basensKptfile = fleettest.BasensKptfile
	basensNS      = fleettest.BasensNS
)

// fleet is fleettest's fleet on the fake forge with the assembled bot.
type fleet struct {
	fake *forgetest.Fake
	bot  *bot.Bot
}

func newFleet(t testing.TB, downstreams int) *fleet {
	t.Helper()
	fake := forgetest.New()
	fleettest.Seed(t, fake, downstreams)
	b, err := newBot(bot.Options{Forges: map[string]forge.Resolver{forge.GitHub: forge.Static(fake)}, Name: "kptbot", Login: "kptbot[bot]"})
	if err != nil {
		t.Fatal(err)
	}
	return &fleet{fake: fake, bot: b}
}
