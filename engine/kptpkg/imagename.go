package kptpkg

import "strings"

// ValidImageName reports whether name is a function image kpt accepts:
// the language of kpt's ValidateFunctionImageURL expression (Docker's
// reference grammar, anchored),
//
//	name      := [domain '/'] component ['/' component]* [(':' | '@') version]
//	domain    := host ['.' host]* [':' [0-9]+]
//	host      := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
//	component := [a-z0-9]+ ([_.] | '__' | '-'*) [a-z0-9]+ ...
//	version   := [\w][\w.-]{0,127} | 'sha256:' [a-zA-Z0-9]{64}
//
// decided without compiling it. The name and the version are split at
// each ':' or '@' in turn, since the domain's port also uses ':'.
func ValidImageName(name string) bool {
	if validRepository(name) {
		return true
	}
	for i := 0; i < len(name); i++ {
		if (name[i] == ':' || name[i] == '@') && validVersion(name[i+1:]) && validRepository(name[:i]) {
			return true
		}
	}
	return false
}

// validRepository: [domain '/'] component ['/' component]*. A domain
// holds no '/', so only the text before the first one can be it.
func validRepository(s string) bool {
	if validComponents(s) {
		return true
	}
	slash := strings.IndexByte(s, '/')
	return slash >= 0 && validDomain(s[:slash]) && validComponents(s[slash+1:])
}

func validComponents(s string) bool {
	for {
		c, rest, more := strings.Cut(s, "/")
		if !validComponent(c) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

// validComponent: runs of [a-z0-9] joined by exactly one of "_", ".",
// "__" or any number of '-' (none included).
func validComponent(s string) bool {
	if s == "" || !lowerAlnum(s[0]) || !lowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); {
		if lowerAlnum(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && !lowerAlnum(s[j]) {
			j++
		}
		switch sep := s[i:j]; {
		case sep == "_" || sep == "." || sep == "__":
		case strings.Trim(sep, "-") == "":
		default:
			return false
		}
		i = j
	}
	return true
}

func validDomain(s string) bool {
	if host, port, ok := strings.Cut(s, ":"); ok {
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return false
		}
		s = host
	}
	for {
		h, rest, more := strings.Cut(s, ".")
		if h == "" || !alnum(h[0]) || !alnum(h[len(h)-1]) || !allBytes(h, func(c byte) bool { return alnum(c) || c == '-' }) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

func validVersion(s string) bool {
	if digest, ok := strings.CutPrefix(s, "sha256:"); ok && len(digest) == 64 && allBytes(digest, alnum) {
		return true
	}
	return len(s) >= 1 && len(s) <= 128 && word(s[0]) && allBytes(s, func(c byte) bool { return word(c) || c == '.' || c == '-' })
}

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func lowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func alnum(c byte) bool { return lowerAlnum(c) || 'A' <= c && c <= 'Z' }

func word(c byte) bool { return alnum(c) || c == '_' }
