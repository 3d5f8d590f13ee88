package config

import (
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// Warnings are what a configuration may do but most likely should not.
// [Load] reports them in Config.Warnings, each a [*Problem] with file,
// line and field; they never fail a load, and `switchboard validate` and
// `serve` print them:
//
//   - a credential written out where a placeholder belongs (a token in
//     env or headers, a key among the args or in a URL; [Literals] tells
//     them): it leaks with the file; `switchboard secrets set NAME` and
//     {{secrets.NAME}} keep it out. A warning, not a refusal: files of
//     other clients written this way are loaded as they are (--config
//     claude_desktop_config.json), and the judgement is a heuristic.
//   - PATH set in a stdio server's env, unless allow_env lists it: it
//     decides which program a bare command name runs, and every program
//     the server starts.
//   - a command line run through a shell (sh -c, bash -lc, cmd /c,
//     pwsh -Command): what runs is the shell's reading of one string.
//   - a server URL whose port is that of a service that is not an MCP
//     server (22 SSH, 6379 Redis, 2375 the Docker API, …): what is sent
//     there reaches that service.

// warnf reports a warning at field, relative to the server, unless a
// problem is reported there already.
func (sc *serverCheck) warnf(field, format string, args ...any) {
	full := sc.prefix
	if field != "" {
		full += "." + field
	}
	if sc.fr != nil && sc.fr.Bad(full) {
		return
	}
	for _, p := range sc.v.problems {
		if p.Field == full && p.Pos.File == sc.s.Source.File {
			return
		}
	}
	line := sc.s.Source.Line
	if sc.fr != nil {
		if l := sc.fr.LineOf(full); l > 0 {
			line = l
		}
	}
	sc.v.warnings = append(sc.v.warnings, &Problem{
		Pos:   Position{File: sc.s.Source.File, Line: line},
		Field: full,
		Msg:   fmt.Sprintf(format, args...),
	})
}

// warnings reports what server s, of transport t, may do but most likely
// should not (see Warnings); PATH is reported with the env guard.
func (sc *serverCheck) warnings(t Transport) {
	s := sc.s
	for _, l := range Literals(*s) {
		written := "looks like a credential written out (" + l.Why + ")"
		switch {
		case l.Movable:
			name := l.SecretName(s.ID)
			sc.warnf(l.Field, `%s: a config file is shared and committed, and what is written there leaks; store it with switchboard secrets set %s, then write "%s{{secrets.%s}}" here`, written, name, l.Keep, name)
		case strings.HasPrefix(l.Field, "env.") || strings.HasPrefix(l.Field, "headers."):
			sc.warnf(l.Field, `%s: a config file is shared and committed, and what is written there leaks; store it with switchboard secrets set NAME, then write {{secrets.NAME}} in its place`, written)
		case l.Field == "url":
			sc.warnf(l.Field, `%s: a URL is logged and shown, and a config file is shared and committed; if the server takes it in a header, send it in headers as "{{secrets.NAME}}" (switchboard secrets set NAME)`, written)
		default: // args
			sc.warnf(l.Field, `%s: argv is readable by every user of this machine, and a config file is shared and committed; if the server reads it from its environment, pass it in env as "{{secrets.NAME}}" (switchboard secrets set NAME)`, written)
		}
	}
	if t == TransportStdio {
		if sh := shellLine(s.Command, s.Args); sh != "" {
			sc.warnf("command", "runs a command line through %s: the shell reads it with its quoting, expansions, ;, | and $(…), which makes what runs hard to tell; name the program in command and its arguments in args", sh)
		}
	}
	if isNetwork(t) && s.URL != "" && !hasPlaceholder(s.URL) {
		if u, err := url.Parse(s.URL); err == nil {
			if n, err := strconv.Atoi(u.Port()); err == nil && servicePorts[n] != "" {
				sc.warnf("url", "port %d is usually %s: what is sent there would reach it, not an MCP server; check the port", n, servicePorts[n])
			}
		}
	}
}

// warnPath warns of PATH set in env (k, as written) without allow_env.
func (sc *serverCheck) warnPath(k string) {
	sc.warnf(decode.KeyPath("env", k), "sets the PATH the server's command and every program it starts are looked up in: a folder there decides which program runs; if this server needs it, add %s", sc.allowEnvExample(k))
}

// isPathVar reports whether an env name is PATH (Windows spells it Path).
func isPathVar(name string) bool { return strings.EqualFold(name, "PATH") }

// servicePorts are the ports of services that are not MCP servers and
// that a request over HTTP or WebSocket can still reach: internal
// databases, caches and control planes (a request smuggled to Redis or
// the Docker API is a command to it), and the other protocols' ports
// browsers refuse (the Fetch standard's bad ports, those in use today).
var servicePorts = map[int]string{
	21: "FTP", 22: "SSH", 23: "Telnet", 25: "SMTP", 53: "DNS", 110: "POP3", 111: "the RPC portmapper",
	135: "Microsoft RPC", 139: "NetBIOS", 143: "IMAP", 389: "LDAP", 445: "SMB", 465: "SMTP", 587: "SMTP",
	636: "LDAP", 993: "IMAP", 995: "POP3", 1433: "SQL Server", 1521: "Oracle Database", 2049: "NFS",
	2181: "ZooKeeper", 2375: "the Docker API without TLS", 2376: "the Docker API", 2379: "etcd", 2380: "etcd",
	3306: "MySQL", 3389: "Remote Desktop", 4369: "the Erlang port mapper", 5432: "PostgreSQL", 5672: "AMQP (RabbitMQ)",
	5900: "VNC", 6379: "Redis", 6443: "the Kubernetes API", 9042: "Cassandra", 9092: "Kafka",
	9200: "Elasticsearch", 9300: "Elasticsearch", 10250: "the kubelet", 11211: "memcached", 27017: "MongoDB",
}

// shellLine says which shell runs a command line given command and args
// ("sh -c", "bash -lc", "cmd /c"), also behind env; "" when none does.
func shellLine(command string, args []string) string {
	name := func(c string) string {
		c = strings.ToLower(path.Base(strings.ReplaceAll(c, `\`, "/")))
		return strings.TrimSuffix(c, ".exe")
	}
	base := name(command)
	if base == "env" {
		// env [-flags] [NAME=value...] program args...
		for len(args) > 0 && (strings.HasPrefix(args[0], "-") || strings.Contains(args[0], "=")) {
			args = args[1:]
		}
		if len(args) == 0 {
			return ""
		}
		base, args = name(args[0]), args[1:]
	}
	switch base {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish":
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-o" || a == "+o" || a == "-O" || a == "+O":
				i++ // the option's name follows
				continue
			case a == "--" || !strings.HasPrefix(a, "-"):
				return "" // a script, not a command line
			case !strings.HasPrefix(a, "--") && strings.Contains(a[1:], "c"):
				return base + " " + a
			}
		}
	case "cmd":
		for _, a := range args {
			if strings.EqualFold(a, "/c") || strings.EqualFold(a, "/k") {
				return base + " " + a
			}
		}
	case "powershell", "pwsh":
		for _, a := range args {
			switch strings.ToLower(a) {
			case "-c", "-command", "-e", "-ec", "-encodedcommand":
				return base + " " + a
			}
		}
	}
	return ""
}
