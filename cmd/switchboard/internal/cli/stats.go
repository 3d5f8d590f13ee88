package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/store"
)

// maxStatsSince is the longest --since: what the store keeps
// (store.UsageHourRetention).
const maxStatsSince = store.UsageHourRetention

func (e *env) statsCommand() *cobra.Command {
	var since time.Duration
	var endpoint string
	cmd := &cobra.Command{
		Use:   "stats [--since 1h|24h] [--endpoint NAME]",
		Short: "Print the calls, errors, latency and tokens recorded in the state store",
		Long: `Prints what switchboard serve, run and workflow run recorded in the state store
over the last --since (default 1h): per server and tool, the calls, the errors
(a tool's own failures included) and the latency's 50th, 95th and 99th
percentiles; per named endpoint ([[endpoints]]), the calls made through it;
per agent and workflow, the runs, the failed ones and the LLM tokens they
used. With --endpoint NAME, only the calls made through that endpoint.

The figures come from a running switchboard serve of this configuration when
there is one (its last seconds included), else from the state store directly.
The store keeps a day of minutes, then hours for 30 days; percentiles are
estimated from latency buckets.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if since <= 0 || since > maxStatsSince {
				return usageErr("--since %s: give a duration from 1m to %s (1h, 24h)", since, maxStatsSince)
			}
			if why := config.CheckEndpointName(endpoint); why != "" {
				return usageErr("--endpoint: %s", why)
			}
			cfg, err := e.loadConfig()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var rep *store.UsageReport
			if c := e.dialDaemon(ctx, cfg, ""); c != nil {
				defer c.Close()
				if rep, err = c.Usage(ctx, since, endpoint); err != nil {
					return failed(err)
				}
			} else {
				st := e.stateStore(cfg)
				if st == nil {
					return failed(fmt.Errorf("no usage to report: %w", e.stateErr))
				}
				if rep, err = st.Usage(ctx, time.Now().Add(-since), endpoint); err != nil {
					return failed(err)
				}
			}
			if e.jsonOut {
				return e.printJSON(rep)
			}
			e.printf("%s", formatUsage(rep, since))
			return nil
		},
	}
	cmd.Flags().DurationVar(&since, "since", time.Hour, "how far back: 1h, 24h, …")
	cmd.Flags().StringVar(&endpoint, "endpoint", "", "only the calls made through this named endpoint")
	return cmd
}

// formatUsage is stats' table.
func formatUsage(rep *store.UsageReport, since time.Duration) string {
	var b strings.Builder
	if len(rep.Calls) == 0 && len(rep.Tokens) == 0 {
		if rep.Endpoint != "" {
			fmt.Fprintf(&b, "no calls through endpoint %s in the last %s\n", rep.Endpoint, since)
		} else {
			fmt.Fprintf(&b, "no usage recorded in the last %s\n", since)
		}
		return b.String()
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if len(rep.Calls) > 0 {
		fmt.Fprintln(tw, "SERVER\tTOOL\tCALLS\tERRORS\tP50\tP95\tP99")
		for _, c := range rep.Calls {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", c.Server, c.Tool, c.Calls, c.Errors, ms(c.P50MS), ms(c.P95MS), ms(c.P99MS))
		}
	}
	if len(rep.Endpoints) > 0 && rep.Endpoint == "" {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "ENDPOINT\tCALLS\tERRORS\tP50\tP95\tP99")
		for _, e := range rep.Endpoints {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", e.Endpoint, e.Calls, e.Errors, ms(e.P50MS), ms(e.P95MS), ms(e.P99MS))
		}
	}
	if len(rep.Tokens) > 0 {
		if len(rep.Calls) > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintln(tw, "KIND\tNAME\tRUNS\tFAILED\tINPUT TOKENS\tOUTPUT TOKENS")
		for _, t := range rep.Tokens {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", t.Kind, t.Name, t.Runs, t.Failed, t.Input, t.Output)
		}
	}
	tw.Flush()
	return b.String()
}

func ms(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2fs", v/1000)
	}
	return fmt.Sprintf("%.1fms", v)
}
