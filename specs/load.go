package specs

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// builtin holds the built-in specs; a spec's name is its file name
// without ".toml".
//
//go:embed *.toml
var builtin embed.FS

// BuiltIn returns the names of the built-in specs, sorted.
func BuiltIn() []string {
	files, err := fs.Glob(builtin, "*.toml")
	if err != nil {
		panic(err) // the pattern is constant and valid
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(f, ".toml")
	}
	sort.Strings(names)
	return names
}

// Load returns the built-in spec called nameOrPath, or else the spec in the
// TOML file at that path. A built-in spec's File is "specs/NAME.toml", its
// place in this module. Problems in the spec come back as an ErrorList.
func Load(nameOrPath string) (*Spec, error) {
	if data, err := builtin.ReadFile(nameOrPath + ".toml"); err == nil && !strings.ContainsAny(nameOrPath, `/\`) {
		s, err := Parse("specs/"+nameOrPath+".toml", data)
		if s != nil {
			s.Name = nameOrPath
		}
		return s, err
	}
	data, err := os.ReadFile(nameOrPath)
	if err != nil {
		return nil, fmt.Errorf("loading spec %q: not a built-in spec (built-in: %s) and not a readable file (%w); give a built-in name or the path to a .toml file",
			nameOrPath, strings.Join(BuiltIn(), ", "), err)
	}
	return Parse(nameOrPath, data)
}

// SHA256 is the hex sha256 of the spec's text, as run.json records it.
func (s *Spec) SHA256() string {
	sum := sha256.Sum256(s.Text)
	return hex.EncodeToString(sum[:])
}
