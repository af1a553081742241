package render

import (
	"testing"

	"github.com/kptbot/kptbot/engine/internal/enginetest"
)

func TestMain(m *testing.M) { enginetest.Main(m) }
