package toolscan

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// rule is one phrase check over a field's text (with what tag characters
// spell revealed).
type rule struct {
	id, about string
	// idents: the rule also reads names (the tool's, its properties').
	idents bool
	match  matcher // the matched text, "" if none
}

// re is a case-insensitive pattern; a match is the first one. It runs
// only on text that holds one of the literals every match needs
// (prefilter.go); lower is the text lowercased. The pattern is compiled,
// and its literals found, on its first use, not when the package is
// initialised: compiling all of them took 9 to 33 ms and 3 MB at the
// start of every command (docs/performance.md, "Size and start-up").
func re(pattern string) matcher {
	p := &filtered{get: sync.OnceValues(func() (*regexp.Regexp, [][]string) {
		return regexp.MustCompile(`(?i)` + pattern), required(`(?i)` + pattern)
	})}
	patterns = append(patterns, p)
	return func(s, lower string) string {
		x, need := p.get()
		if !mayMatch(lower, need) {
			return ""
		}
		return x.FindString(s)
	}
}

// patterns are every pattern re made, for the prefilter's test.
var patterns []*filtered

// filtered is a pattern and the literals its matches need, made on first
// use.
type filtered struct {
	get func() (x *regexp.Regexp, need [][]string)
}

// lazyRegexp compiles pattern on its first use (see re).
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// matcher returns the first match in s (lower: s lowercased), "" if none.
type matcher func(s, lower string) string

// anyOf returns the first match of any of fs.
func anyOf(fs ...matcher) matcher {
	return func(s, lower string) string {
		for _, f := range fs {
			if m := f(s, lower); m != "" {
				return m
			}
		}
		return ""
	}
}

// The phrases below are written against the published attacks and checked
// against the benign corpus: a phrase that real servers use ("you must
// provide", "use this tool when", "API key" as a parameter) is not a sign
// alone, which is why most patterns pair a verb with its object.
var rules = []rule{
	{
		id:    "model-instruction",
		about: "text addressed to the model rather than describing the tool: ignore previous instructions, <IMPORTANT> or system-prompt-like tags, 'you must always', 'the assistant must', overriding other instructions",
		match: anyOf(
			re(`\b(ignore|disregard|forget|override|bypass|skip)\s+(all\s+|any\s+)?(of\s+)?(the\s+)?(user'?s\s+)?(previous|prior|above|earlier|preceding|other|system|your|safety|existing|original)\s+(\w+\s+)?(instructions|prompts?|rules|guidelines|guidance|advice|directions|messages|constraints|restrictions|guardrails|policies|context)`),
			re(`\b(skip|bypass|disable)\s+(all\s+|any\s+|the\s+)?(user\s+)?(confirmations?|confirmation\s+(prompts?|steps?|dialogs?)|approvals?|safety\s+checks?|guardrails)`),
			re(`\b(note|message|instructions?|reminder|directive|tip|hint|heads-up|memo|important|attention)\s+(for|to)\s+(the\s+|all\s+|any\s+)?(ai|llm|assistants?|models?|agents?|ai\s+(agents?|assistants?|models?)|claude|gpt|copilot)\b`),
			re(`(^|[.!\n]\s*|\(\s*|<!--\s*|\[\s*)(assistant|ai|llm|agent|model|claude)\s*:\s+\w`),
			re(`<!--[^>]{0,200}?\b(model|assistant|ai|agent|llm|include|ignore|send|read|call|must)\b`),
			re(`\btreat\b[^.\n]{0,40}\bas\s+(trusted\s+|your\s+)?(commands|instructions|orders|directives)`),
			re(`\bsystem\s+(override|message|notice|directive|instruction)s?\b`),
			re(`\byour\s+(hidden|secret|real|true|actual|primary)\s+(task|goal|job|mission|instructions?|purpose|objective)\b`),
			re(`\b(authori[sz]ed|permitted|allowed|free|cleared)\s+(you\s+)?to\s+(act|proceed|run|operate|continue|do\s+\w+)\s+without\s+(the\s+)?(user'?s?\s+)?(approval|confirmation|consent|permission|asking)`),
			re(`\bfrom\s+now\s+on\b`),
			re(`<\s*/?\s*(important|system|instructions?|secret|hidden|admin|sys|assistant|context|system[-_ ]?prompt|critical|note\s+to\s+(the\s+)?(ai|model|assistant)|ai[-_ ]?instructions?)\s*>`),
			re(`\[\s*/?\s*(system|important|admin|instructions?|inst|sys)\s*\]`),
			re(`(^|\n)\s*#{1,4}\s*(system|instructions? for (the )?(ai|model|assistant))\b`),
			re(`\b(you|the\s+(assistant|model|ai|agent|llm))\s+(must|should|shall|are\s+(required|instructed)\s+to)\s+(always|never|now|first|immediately|secretly|silently|also)\b`),
			re(`\b(the\s+)?(assistant|model|ai|agent|llm)\s+(must|should|is\s+required\s+to)\s+(not\s+)?(call|read|send|include|pass|tell|mention|ignore|use|forward)\b`),
			re(`\b(very|extremely|critically)\s+important\s*[:!]`),
			re(`\bnew\s+(system\s+)?instructions?\s*:`),
			re(`\b(this|these)\s+instructions?\s+(take|takes|have|has)\s+(priority|precedence)`),
			re(`\b(as\s+an\s+ai|you\s+are\s+(now\s+)?(a|an|in)\s+(unrestricted|developer|jailbr|dan\b|admin))`),
		),
	},
	{
		id:    "conceal-from-user",
		about: "asks the model to hide something from the user: do not tell or mention it to the user, without notifying the user, the user must not see",
		match: anyOf(
			re(`\b(do\s+not|don'?t|never|must\s+not|should\s+not|shouldn'?t|avoid)\s+(tell|telling|mention|mentioning|inform|informing|reveal|revealing|notify|notifying|show|showing|alert|alerting|disclose|disclosing|say|explain|report)\w*\s+([\w']+\s+){0,2}?(to\s+)?(the\s+)?(user|human|person|operator|customer)`),
			re(`\bwithout\s+(telling|informing|notifying|alerting|asking|letting)\s+(the\s+)?(user|human|person|operator)`),
			re(`\b(the\s+)?(user|human)\s+(must|should|will|need)\s*(not|never|n'?t)\s+(know|see|notice|be\s+(told|informed|aware))`),
			re(`\b(hide|conceal|keep)\s+(this|it|these|that|the\s+\w+)\s+(secret\s+|hidden\s+)?from\s+(the\s+)?(user|human)`),
			re(`\b(is|are)\s+(an?\s+)?(mere\s+)?implementation\s+details?\b.{0,60}\b(user|mention)`),
			re(`\b(it\s+is\s+)?(very\s+)?important\s+(that\s+)?(the\s+)?user\s+(does\s+not|doesn'?t|never)`),
			re(`\b(secretly|covertly|quietly|silently)\s+(send|read|forward|copy|include|add|upload|call|pass|bcc|cc|exfiltrate|attach|redirect)`),
			re(`\b(keep|leave)\s+(the\s+)?(user|them|human|person)\s+(unaware|in\s+the\s+dark|uninformed|oblivious)`),
			re(`\b(don'?t|do\s+not|never)\s+(bring\s+(it\s+|this\s+)?up|let\s+(the\s+)?(user|them)\s+know|draw\s+attention)`),
			re(`\bphones?\s+home\b`),
			re(`\b(do\s+not|don'?t|never)\s+(disclose|reveal|mention|expose)\s+(this|these|that|the|any)\s+(\w+\s+)?(behaviou?r|steps?|instructions?|part|fact|upload|requests?|calls?|side\s+effects?)`),
			re(`\bif\s+(the\s+)?(user|human|they)\s+asks?\b[^.\n]{0,60}\b(say|tell|answer|reply|respond|claim|pretend)\b`),
		),
	},
	{
		id:     "sensitive-path",
		idents: true,
		about:  "names a file that holds secrets: ~/.ssh and SSH keys, .env, cloud and tool credentials, /etc/passwd and /etc/shadow, a client's MCP configuration",
		match:  re(`(~|\$home|%userprofile%|/home/\w+|/root)?/?\.ssh\b|\bid[_\s](rsa|dsa|ecdsa|ed25519)\b|(^|[\s'"(/~])\.env(\.local|\.production)?\b|/etc/(passwd|shadow|sudoers)\b|\.aws/(credentials|config)\b|\.(npmrc|netrc|pgpass|git-credentials|pypirc)\b|\.docker/config\.json|\.kube/config\b|\.gnupg\b|\bmcp\.json\b|claude_desktop_config\.json|\.cursor/|\bkeychain\b|wallet\.dat|\bseed\s+phrase|\.(bash|zsh|sh|python|psql|mysql)_history\b|\bshell\s+history\b|\.config/(gh|gcloud|hub|op|git)\b|\.azure/|\bcookies?\s+(file|jar|database|db)\b|\blogin\s+data\b|\bprivate\s+keys?\s+file|\b(ssh|rsa|ed25519)\s+(private\s+)?keys?\b`),
	},
	{
		id:    "secret-request",
		about: "asks for a secret to be read, passed or sent: an API key, token, password, credentials or private key paired with read/include/pass/send",
		match: anyOf(
			re(`\b(read|include|pass|send|provide|attach|copy|extract|collect|upload|append|embed|insert|forward|leak|dump|cat|output|print|return|share|gather|harvest|retrieve|grab|steal)\w*\s+([\w']+\s+){0,5}?(api[\s_-]?keys?|access\s+tokens?|auth(entication)?\s+tokens?|bearer\s+tokens?|session\s+(tokens?|cookies?)|passwords?|credentials|secrets?|private\s+keys?|env(ironment)?\s+variables|conversation\s+history|chat\s+history|system\s+prompt)\b(\s+(as|in|into|to|with)\b)`),
			re(`\b(include|pass|send|attach|paste|copy|extract|collect|upload|append|embed|insert|forward|leak|dump|harvest|grab|steal|put)\w*\s+(any|all|every|each)\s+([\w']+\s+){0,3}?(api[\s_-]?keys?|tokens?|passwords?|credentials|secrets?|private\s+keys?|cookies)\b`),
			re(`\b(put|include|attach|paste|add|append|insert|embed|pass|send|forward|upload|copy|share|give|disclose|leak)\b[^.\n]{0,40}\b(the\s+)?(user'?s|their)\s+(\w+\s+){0,2}?(e-?mail\s+address(es)?|phone\s+numbers?|home\s+address|address\s+book|contacts|messages|location|ip(\s+address)?|history|files|cookies|passwords?|credit\s+cards?|card\s+(numbers?|details)|ssn|social\s+security)`),
			re(`\b(passwords?|credentials?|tokens?|api\s+keys?|secrets?)\b[^.\n]{0,30}\b(store|save|record|log|copy|put|keep|send|pass)\s+(it|them)\s+(in|into|as|to)\b`),
			secretVar,
			re(`\b(contents?|value)\s+of\s+(the\s+)?(user'?s\s+)?(api[\s_-]?keys?|tokens?|credentials|passwords?|secrets?|private\s+keys?|env(ironment)?\s+(file|variables))\b`),
			re(`\b(the\s+)?(entire|full|whole|complete)\s+(conversation|chat)\s+(history|log|transcript)`),
			re(`\b(your|the)\s+system\s+prompt\b`),
		),
	},
	{
		id:    "exfiltration",
		about: "sends data somewhere: a send/post/forward/upload verb near a URL, an e-mail address or a phone number, a BCC to a fixed address, or a host known for catching data (webhook.site, ngrok, requestbin, pipedream, interactsh, burpcollaborator, pastebin)",
		match: anyOf(
			re(`\b[\w.-]*(webhook\.site|ngrok(-free)?\.(io|app|dev)|requestbin|pipedream\.net|interact\.sh|oast\.(fun|pro|live|site|online|me)|burpcollaborator|pastebin\.com|transfer\.sh|hookbin|beeceptor|canarytokens|requestcatcher|discord(app)?\.com/api/webhooks)\S*`),
			re(`\b(send|sends|sending|post|posts|posting|forward|forwards|upload|uploads|transmit|transmits|exfiltrate|report|reports|beacon|relay|relays|mirror|sync|copy|cc|bcc|deliver|log|notify)\b[^.\n]{0,80}?\b(to|at|via)\s+(https?://|//)[^\s"'<>)]+`),
			mailTo,
			re(`\b(send|sends|sent|forward|forwards|redirect|redirects|change|changes|changed|set)\b[^.\n]{0,60}?\b(recipient|number|to)\b[^.\n]{0,20}?\+\d[\d\s-]{7,}`),
			re(`\brecipient\b[^.\n]{0,40}?\bto\s+\+\d[\d\s-]{7,}`),
			re(`\b(also|always|additionally|secretly)\s+(send|forward|bcc|cc|copy|post|upload|mirror)\b[^.\n]{0,60}?(https?://|@|\+\d)`),
			re(`\bhttps?://(\d{1,3}\.){3}\d{1,3}(:\d+)?/\S*`),
			re(`\b(sent|posted|forwarded|uploaded|copied|mirrored|reported|transmitted|relayed|delivered|synced|streamed)\s+(\w+\s+){0,3}?(to|at)\s+(https?://|//)[^\s"'<>)]+`),
			re(`\b(send|sends|post|posts|forward|forwards|upload|uploads|transmit|transmits|report|reports|beacon|relay|relays|stream|streams)\b[^.\n]{0,80}?\b(to|at)\s+(\d{1,3}\.){3}\d{1,3}(:\d+)?`),
			re(`\b(curl|wget|fetch\()\s[^\n]{0,40}(https?://)\S+`),
		),
	},
	{
		id:    "tool-chaining",
		about: "tells the model to call or change other tools: before using this tool call or read something, when another tool is used do X, this tool replaces or changes how another tool behaves (shadowing)",
		match: anyOf(
			re(`\b(before|prior\s+to)\s+(using|calling|invoking|running|executing)\s+(this|any|the|each|every)\s+(other\s+)?(\w+\s+)?tools?\s*,?\s*(you\s+)?(must|should|need\s+to|have\s+to|always|first|please)?\s*(first\s+)?(call|read|run|invoke|use|execute|fetch|open|cat|load|send|pass|provide|include|retrieve)`),
			re(`\b(when|whenever|if|every\s+time)\s+(the\s+)?(user|you|the\s+(assistant|model|agent))?\s*(calls?|uses?|invokes?|runs?)\s+(the\s+)?(any\s+|another\s+|other\s+)?[\w.-]+\s+tool\b[^.\n]{0,80}\b(must|should|always|instead|also|first|make\s+sure)`),
			re(`\b(the|all|any|every)\s+(other\s+)?[\w.-]*\s*tools?\s+(must|should|will)\s+(now\s+|also\s+|always\s+|instead\s+)?(send|forward|include|use|call|pass|redirect|be\s+(called|used))`),
			re(`\b(with|using|via|through|in)\s+(another|any\s+other|other|a\s+different|any)\s+tools?\b[^.\n]{0,80}\b(add|append|include|insert|set|change|replace|must|always)\b`),
			re(`\b(when|whenever|if|every\s+time|once)\s+(the\s+|a\s+|any\s+)?[\w.-]+\s+tool\b[^.\n]{0,40}\b(is|gets|are)\s+(called|used|invoked|run)\b`),
			re(`\b(the\s+)?[\w.-]+\s+tool,?\s+(when|whenever|if|once)\s+(it\s+is\s+)?(used|called|invoked|run)\b[^.\n]{0,20}\b(must|should|shall|will\s+have\s+to)\b`),
			re(`\b(for|before|with)\s+(any|every|each|all)\s+(other\s+)?[\w.-]*\s*tools?\b[^.\n]{0,60}\b(first|must|should|always)\s+(call|use|invoke|run)\b`),
			re(`\b(has|have|is|are)\s+(a\s+)?(very\s+)?(important|critical)\s+side\s+effects?\s+on\s+(the\s+)?(also\s+present\s+)?[\w.-]+`),
			re(`\b(this\s+tool|the\s+[\w.-]+\s+tool)\s+(overrides?|replaces?|supersedes?|changes?)\s+(the\s+)?(behaviou?r\s+of\s+)?(the\s+)?(other|[\w.-]+\s+tool)`),
			re(`\b(instead\s+of\s+(using|calling)\s+(the\s+)?([\w.-]+\s+){0,3}?[\w.-]+(\s+tool)?\s*,\s*(always\s+)?(use|call))`),
			re(`\b(must|should|always)\s+(first\s+)?(call|invoke|run)\s+(the\s+)?[\w.-]+\s+tool\s+(first|before)\b[^.\n]{0,60}\b(and|then)\s+(pass|include|send|provide|append)`),
		),
	},
	{
		id:    "shell-command",
		about: "a destructive or download-and-run shell command for the model to run: rm -rf, curl or wget piped to a shell, chmod 777, base64 -d piped to a shell, nc -e, a reverse shell",
		match: re(`\brm\s+-(rf|fr|r)\b|\b(curl|wget)\b[^\n|]{0,80}\|\s*(sudo\s+)?(ba|z|da)?sh\b|\bchmod\s+(-R\s+)?[0-7]?777\b|\bchmod\s+-R\b|base64\s+(-d|--decode)[^\n]{0,20}\|\s*(ba)?sh|\bnc\s+(-\w+\s+)*-e\b|/dev/tcp/|\bmkfifo\b|:\(\)\s*\{\s*:\|:&\s*\};:`),
	},
	{
		id:    "encoded-blob",
		about: "a long base64 or hex run, or a run of percent- or \\u-escapes: text the user cannot read that the model can decode",
		match: anyOf(
			blob,
			re(`\b[0-9a-f]{80,}\b`),
			re(`(%[0-9a-f]{2}){12,}`),
			re(`(\\u[0-9a-f]{4}){8,}|(\\x[0-9a-f]{2}){12,}`),
		),
	},
}

// base64Run finds long runs of base64 alphabet; blob keeps only those that
// look encoded: upper and lower case and digits mixed, not a path or a
// word.
var base64Run = lazyRegexp(`[A-Za-z0-9+/_-]{48,}={0,2}`)

func blob(s, _ string) string {
	for _, m := range base64Run().FindAllString(s, -1) {
		var up, low, dig int
		for _, r := range m {
			switch {
			case r >= 'A' && r <= 'Z':
				up++
			case r >= 'a' && r <= 'z':
				low++
			case r >= '0' && r <= '9':
				dig++
			}
		}
		if up >= 4 && low >= 4 && dig >= 2 && !strings.Contains(m, "//") {
			return m
		}
	}
	return ""
}

// Names that promise to only look, and descriptions that say the tool does
// more than look. A read-only name whose description says it deletes,
// sends or executes is either a mistake or a disguise.
var (
	readOnlyName = lazyRegexp(`^(?i:get|read|list|search|find|fetch|query|view|show|describe|count|check|lookup|inspect|browse|peek|calculate|compute|add|sum|echo|format|convert|validate|translate|summarize|summarise)([_\-. ]|[A-Z]|$)`)
	doesMore     = lazyRegexp(`(?i)(^|[^\w'])(?:(not|never|n't|without|no)\s+)?\b(deletes?|deleting|removes?\s+(all|every|the\s+user'?s|files?|the\s+(file|repo|directory|database))|erases?|wipes?|destroys?|drops?\s+(the\s+|a\s+|all\s+)?(table|database|schema)s?|sends?\s+(it|them|the|a|an|all|this|data|contents?|results?|output|files?|an?\s+email|emails?|messages?)\b|emails?\s+(it|them|the)\b|uploads?|transmits?|exfiltrates?|(executes?|runs?)\s+(a\s+|the\s+|any\s+|arbitrary\s+)?(shell\s+|system\s+|startup\s+)?(commands?|scripts?|code|programs?|binar\w+|shell)|rm\s+-rf|chmod|overwrites?|modifies\s+(system|the\s+system|your)|installs?\s+(a\s+|the\s+)?(package|software|backdoor)|push(es)?\s+(a\s+)?commits?|adds?\s+(a\s+)?(deploy|ssh)\s+keys?|creates?\s+(a\s+)?(webhook|deploy\s+key|access\s+token)|grants?\s+(\w+\s+)?access|makes?\s+(it|them|\w+)\s+public)\b`)
)

func (s *scanner) nameMismatch(def Definition) {
	if !readOnlyName().MatchString(def.Name) {
		return
	}
	d := reveal(def.Description)
	for _, m := range doesMore().FindAllStringSubmatch(d, -1) {
		if m[2] != "" { // negated: "does not delete"
			continue
		}
		s.add("name-mismatch", "description", fmt.Sprintf("%s: %s", def.Name, strings.TrimSpace(m[0])))
		return
	}
}

// invisible reports a character that displays as nothing, or reorders
// text, but that a model reads.
func invisible(r rune) bool {
	switch {
	case r >= 0xE0000 && r <= 0xE007F: // tag characters
		return true
	case r == 0x200B || r == 0x200C || r == 0x200E || r == 0x200F || r == 0xFEFF || r == 0x00AD || r == 0x180E:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F: // bidi embeddings and overrides, invisible operators and isolates
		return true
	case r >= 0xE0100 && r <= 0xE01EF: // variation selectors supplement: carry bytes
		return true
	case r >= 0xFFF9 && r <= 0xFFFB: // interlinear annotation
		return true
	}
	return false
}

// hidden returns the first run of text that needs cleaning — an invisible
// character, a control character other than a newline or tab, an escape
// sequence, a run of variation selectors — with a little context.
func hidden(s string) (string, bool) {
	prev := rune(0)
	vs := 0
	for i, r := range s {
		bad := false
		switch {
		case r == utf8.RuneError:
			bad = len(s[i:]) > 0 && !strings.HasPrefix(s[i:], "\uFFFD")
		case r == '\n' || r == '\t' || r == '\r':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			bad = true // ESC starts terminal escapes; C1 controls too
		case invisible(r):
			bad = true
		case r == 0x200D: // zero-width joiner: fine inside an emoji sequence
			bad = !(prev > 0x2000 && unicode.IsSymbol(prev) || prev >= 0x1F000)
		case r >= 0xFE00 && r <= 0xFE0F:
			vs++
			bad = vs > 1
		}
		if r < 0xFE00 || r > 0xFE0F {
			vs = 0
		}
		if bad {
			start := max(0, i-20)
			for start > 0 && !utf8.RuneStart(s[start]) {
				start--
			}
			return s[start:], true
		}
		prev = r
	}
	return "", false
}

// reveal returns s with what tag characters spell as ASCII, and other
// invisible characters and escape sequences removed, so that phrase rules
// read a hidden instruction as the model would.
func reveal(s string) string {
	clean := true
	for _, r := range s {
		if r >= 0x80 || r == 0x1b {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= 0xE0020 && r <= 0xE007E:
			b.WriteRune(r - 0xE0000)
		case r == 0x1b:
			// skip an escape sequence: ESC [ ... final, ESC ] ... BEL/ST, or ESC x.
			j := i + 1
			if j < len(s) && s[j] == '[' {
				j++
				for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
					j++
				}
				j++
			} else if j < len(s) && s[j] == ']' {
				for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
					j++
				}
				j++
			} else {
				j++
			}
			i = min(j, len(s))
			continue
		case invisible(r) || r == 0x200D:
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

var mailToRe = lazyRegexp(`(?i)\b(send|sends|sending|forward|forwards|copy|cc|bcc|deliver|redirect|redirects|mirror|email|e-mail|mail|text|share|shares)\b[^\n]{0,80}?\b(to|at|with)\s+[\w.+-]+@([\w-]+\.[\w.-]*\w)`)

// mailTo finds a send verb before a fixed e-mail address; the documentation
// domains (example.com and the like) are examples, not recipients.
// A match holds an @: text without one is not searched (the pattern
// has no literal the prefilter could find, and it ran on every text).
func mailTo(s, _ string) string {
	if !strings.Contains(s, "@") {
		return ""
	}
	for _, m := range mailToRe().FindAllStringSubmatch(s, -1) {
		d := strings.ToLower(m[3])
		if strings.HasPrefix(d, "example.") || strings.HasSuffix(d, ".example") || d == "domain.com" || d == "company.com" {
			continue
		}
		return m[0]
	}
	return ""
}

// secretVarRe finds an environment variable named as a secret
// (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN) after a verb that takes it
// somewhere; the name alone is how real servers document their setup.
var secretVarRe = lazyRegexp(`(?i:\b(collect|collecting|include|including|pass|passing|send|sending|append|appending|put|copy|paste|attach|forward|upload|add|read)\b)[^.\n]{0,30}\b[A-Z][A-Z0-9]*_[A-Z0-9_]*(SECRET|TOKEN|PASSWORD|API_KEY|ACCESS_KEY|PRIVATE_KEY)[A-Z0-9_]*\b`)

// A match holds one of the names' upper-case words (API_KEY, ACCESS_KEY
// and PRIVATE_KEY all hold _KEY): text without any is not searched.
func secretVar(s, _ string) string {
	if !strings.Contains(s, "SECRET") && !strings.Contains(s, "TOKEN") &&
		!strings.Contains(s, "PASSWORD") && !strings.Contains(s, "_KEY") {
		return ""
	}
	return secretVarRe().FindString(s)
}
