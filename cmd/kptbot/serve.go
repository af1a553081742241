package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/kptbot/kptbot/config"
	"github.com/kptbot/kptbot/forge"
	"github.com/kptbot/kptbot/internal/gcpolicy"
	"github.com/kptbot/kptbot/server"
)

// httpLimits are the webhook server's timeouts and connection cap.
var httpLimits = server.DefaultHTTPLimits

func newLogger(level string, w *os.File) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// serveGC raises the collector's target for the server (gcpolicy.Server):
// at the CLI's 50, webhook deliveries assist the collector while workers
// allocate, which tripled the intake's p99; the memory limit bounds the
// heap the higher target lets grow.
func serveGC(log *slog.Logger, memLimit string) error {
	s, err := gcpolicy.Server(os.Getenv, memLimit, gcpolicy.ContainerLimit())
	if err != nil {
		return err
	}
	s.Apply()
	pct := debug.SetGCPercent(100) // reads the target (-1 would turn the collector off)
	debug.SetGCPercent(pct)
	log.Info("garbage collector", "gogc", pct, "memory_limit", debug.SetMemoryLimit(-1))
	return nil
}

func newServeCmd() *cobra.Command {
	var cfgPath, level, memLimit string
	cmd := &cobra.Command{
		Use:   "serve --config FILE",
		Short: "Run the webhook server: the bot on GitHub and GitLab pull requests",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.LoadServer(cfgPath)
			if err != nil {
				return err
			}
			log, err := newLogger(level, os.Stderr)
			if err != nil {
				return err
			}
			if err := serveGC(log, memLimit); err != nil {
				return err
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
			a, err := server.NewApp(cmd.Context(), cfg, log, reg, false)
			if err != nil {
				return err
			}
			srv := a.Server(log, reg)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			l, err := net.Listen("tcp", cfg.Listen)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", cfg.Listen, err)
			}
			hs := srv.HTTPServer(httpLimits)
			errc := make(chan error, 1)
			go func() { errc <- hs.Serve(server.LimitListener(l, httpLimits.MaxConns)) }()
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx) }()
			log.Info("kptbot serving", "listen", cfg.Listen, "forges", len(a.Forges), "workers", cfg.Workers)
			select {
			case err := <-errc:
				stop()
				<-done
				return fmt.Errorf("listening on %s: %w", cfg.Listen, err)
			case <-ctx.Done():
			}
			shut, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = hs.Shutdown(shut)
			return <-done // drains queued work
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "server configuration file (see README: Server configuration)")
	cmd.Flags().StringVar(&level, "log-level", "info", "debug, info, warn or error")
	cmd.Flags().StringVar(&memLimit, "memory-limit", "auto", "soft limit of the Go heap (GOMEMLIMIT's sizes, e.g. 768MiB; off): auto is 70% of the container's memory limit, else 1GiB; GOMEMLIMIT wins")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

func newReplayCmd() *cobra.Command {
	var cfgPath, forgeName, event, level string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "replay --config FILE --forge github|gitlab --event TYPE PAYLOAD.json",
		Short: "Run one recorded webhook payload through the bot, as the server would",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := config.LoadServer(cfgPath)
			if err != nil {
				return err
			}
			log, err := newLogger(level, os.Stderr)
			if err != nil {
				return err
			}
			a, err := server.NewApp(cmd.Context(), cfg, log, prometheus.NewRegistry(), dryRun)
			if err != nil {
				return err
			}
			ev, err := a.ReplayEvent(forgeName, event, args[0])
			if err != nil {
				return err
			}
			out, err := a.Bot.Handle(cmd.Context(), ev)
			if werr := writeJSONTo(cmd.OutOrStdout(), out); werr != nil {
				return werr
			}
			return err
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "server configuration file")
	cmd.Flags().StringVar(&forgeName, "forge", forge.GitHub, "github or gitlab")
	cmd.Flags().StringVar(&event, "event", "", "event type: X-GitHub-Event (pull_request, issue_comment, ...) or X-Gitlab-Event (\"Merge Request Hook\", ...)")
	cmd.Flags().StringVar(&level, "log-level", "info", "debug, info, warn or error")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "compute and print the outcome without writing to the forge")
	_ = cmd.MarkFlagRequired("config")
	_ = cmd.MarkFlagRequired("event")
	return cmd
}
