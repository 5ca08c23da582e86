package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

const adminName = "admin"

// identity is a named credential: a static bearer token that authenticates as User in Groups.
type identity struct {
	Name   string
	User   string
	Groups []string
}

var defaultIdentities = []string{
	"alice=system:serviceaccount:default:alice",
	"bob=system:serviceaccount:default:bob",
	"carol=system:serviceaccount:default:carol",
	"dave=system:serviceaccount:default:dave",
	"nobody=system:serviceaccount:default:nobody",
}

var identityName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// parseIdentity reads "name=user". A ServiceAccount user (system:serviceaccount:<ns>:<sa>) gets
// the groups the real ServiceAccount token authenticator gives it, so RBAC bindings to
// ServiceAccounts apply verbatim; any other user gets system:authenticated only.
func parseIdentity(spec string) (identity, error) {
	name, user, ok := strings.Cut(spec, "=")
	if !ok || name == "" || user == "" {
		return identity{}, fmt.Errorf("--identity %q: want name=user, e.g. alice=system:serviceaccount:default:alice", spec)
	}
	if !identityName.MatchString(name) || name == adminName {
		return identity{}, fmt.Errorf("--identity %q: name must be lowercase letters, digits and '-', and not %q", spec, adminName)
	}
	if strings.ContainsAny(user, ",\"\n") {
		return identity{}, fmt.Errorf("--identity %q: user may not contain commas, quotes or newlines", spec)
	}
	groups := []string{"system:authenticated"}
	if rest, isSA := strings.CutPrefix(user, "system:serviceaccount:"); isSA {
		ns, sa, ok := strings.Cut(rest, ":")
		if !ok || ns == "" || sa == "" || strings.Contains(sa, ":") {
			return identity{}, fmt.Errorf("--identity %q: want system:serviceaccount:<namespace>:<name>", spec)
		}
		groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	}
	return identity{Name: name, User: user, Groups: groups}, nil
}

func parseIdentities(specs []string) ([]identity, error) {
	if len(specs) == 0 {
		specs = defaultIdentities
	}
	seen := map[string]bool{}
	var ids []identity
	for _, spec := range specs {
		id, err := parseIdentity(spec)
		if err != nil {
			return nil, err
		}
		if seen[id.Name] {
			return nil, fmt.Errorf("--identity %q: name given twice", spec)
		}
		seen[id.Name] = true
		ids = append(ids, id)
	}
	return ids, nil
}

func adminIdentity() identity {
	return identity{Name: adminName, User: "admin", Groups: []string{"system:masters", "system:authenticated"}}
}

// ensureTokens returns a token per identity name, reusing those stored in tokensPath and
// generating the missing ones, then rewrites tokensPath with exactly the given identities.
func ensureTokens(tokensPath string, ids []identity) (map[string]string, error) {
	stored := map[string]string{}
	data, err := os.ReadFile(tokensPath)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &stored); err != nil {
			return nil, fmt.Errorf("%s: %w", tokensPath, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	tokens := map[string]string{}
	for _, id := range ids {
		if t := stored[id.Name]; t != "" {
			tokens[id.Name] = t
			continue
		}
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		tokens[id.Name] = hex.EncodeToString(b)
	}
	return tokens, writeJSONAtomic(tokensPath, tokens, 0o600)
}

// writeTokenAuthFile writes kube-apiserver's --token-auth-file: token,user,uid,"group1,group2".
func writeTokenAuthFile(path string, ids []identity, tokens map[string]string) error {
	sorted := append([]identity(nil), ids...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b strings.Builder
	for _, id := range sorted {
		fmt.Fprintf(&b, "%s,%s,%s,\"%s\"\n", tokens[id.Name], id.User, id.User, strings.Join(id.Groups, ","))
	}
	return writeFileAtomic(path, []byte(b.String()), 0o600)
}
