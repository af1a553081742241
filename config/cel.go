package config

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/interpreter"
)

// Limits on PackageVariantSet template expressions. A set is written by
// whoever can push to its repository and evaluated by the bot for every
// target, so an expression must not be able to spend the bot's CPU: each
// is bounded in size and in CEL's cost units, a whole set's evaluations
// by a total cost budget, and both by deadlines. The cost limits are what
// bound the work, the same on any machine; the deadlines are a backstop,
// generous so that a loaded machine does not fail a legitimate set.
// Porch's expressions (string concatenation, label lookups) cost tens of
// units.
const (
	// ExprCostLimit is CEL's runtime cost limit for one evaluation.
	ExprCostLimit = 100_000
	// ExprSizeLimit is the longest expression accepted, in code points.
	ExprSizeLimit = 4096
	// ExprTimeout bounds one evaluation.
	ExprTimeout = time.Second
	// ExpandCostBudget bounds the cost of all of one set's evaluations
	// together (every expression for every target): many cheap
	// expressions over many targets must not add up to an expensive set.
	ExpandCostBudget = 10 * ExprCostLimit
	// ExpandTimeout bounds expanding one PackageVariantSet, every target
	// and expression included.
	ExpandTimeout = 10 * time.Second
	// exprInterruptEvery is how many comprehension iterations run between
	// checks of the deadline.
	exprInterruptEvery = 100
	// exprRecursionLimit bounds the parse tree's depth.
	exprRecursionLimit = 64
)

// celEnv is the one environment every template expression compiles in,
// with Porch's variables.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.ParserExpressionSizeLimit(ExprSizeLimit),
		cel.ParserRecursionLimit(exprRecursionLimit),
		cel.Variable("repoDefault", cel.StringType),
		cel.Variable("packageDefault", cel.StringType),
		cel.Variable("upstream", cel.DynType),
		cel.Variable("target", cel.DynType),
		cel.Variable("repository", cel.DynType),
	)
})

// evaluator evaluates one set's expressions: each compiled once, every
// evaluation within the set's deadline.
type evaluator struct {
	ctx   context.Context
	set   string
	progs map[string]cel.Program
	// spent is the cost of the set's evaluations so far.
	spent uint64
}

// eval evaluates a CEL expression that must yield a string.
func (ev *evaluator) eval(expr string, inputs map[string]any) (string, error) {
	prog, err := ev.program(expr)
	if err != nil {
		return "", err
	}
	if err := ev.ctx.Err(); err != nil {
		return "", fmt.Errorf("%s: not evaluated: expanding the set took longer than %s", shortExpr(expr), ExpandTimeout)
	}
	ctx, cancel := context.WithTimeout(ev.ctx, ExprTimeout)
	defer cancel()
	if ev.spent > ExpandCostBudget {
		return "", fmt.Errorf("%s: not evaluated: the set's expressions together exceed the cost budget of %d", shortExpr(expr), ExpandCostBudget)
	}
	val, det, err := prog.ContextEval(ctx, inputs)
	if det != nil && det.ActualCost() != nil {
		ev.spent += *det.ActualCost()
	}
	if err != nil {
		var cancelled interpreter.EvalCancelledError
		switch {
		case errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded:
			return "", fmt.Errorf("%s: exceeds the cost limit of %d: template expressions must stay simple (no large or nested comprehensions)", shortExpr(expr), ExprCostLimit)
		case ctx.Err() != nil && ev.ctx.Err() != nil:
			return "", fmt.Errorf("%s: stopped: expanding the set took longer than %s", shortExpr(expr), ExpandTimeout)
		case ctx.Err() != nil:
			return "", fmt.Errorf("%s: stopped: took longer than %s", shortExpr(expr), ExprTimeout)
		}
		return "", fmt.Errorf("%s: %w", shortExpr(expr), err)
	}
	native, err := val.ConvertToNative(reflect.TypeOf(""))
	if err != nil {
		return "", fmt.Errorf("%s: expression must yield a string: %w", shortExpr(expr), err)
	}
	return native.(string), nil
}

func (ev *evaluator) program(expr string) (cel.Program, error) {
	if p, ok := ev.progs[expr]; ok {
		return p, nil
	}
	env, err := celEnv()
	if err != nil {
		return nil, err
	}
	ast, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		return nil, fmt.Errorf("%s: %w", shortExpr(expr), issues.Err())
	}
	prog, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize),
		cel.CostLimit(ExprCostLimit), cel.InterruptCheckFrequency(exprInterruptEvery))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shortExpr(expr), err)
	}
	ev.progs[expr] = prog
	return prog, nil
}

// shortExpr quotes an expression for a message, cut short: the field path
// already says which one it is.
func shortExpr(expr string) string {
	const max = 60
	if r := []rune(expr); len(r) > max {
		expr = string(r[:max]) + "…"
	}
	return strconv.Quote(expr)
}
