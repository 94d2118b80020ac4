package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// LoadList reads the list a recording keeps under key in its file name
// ({"<key>": [...]}, as KeepList writes it); none (and no error) when dir
// holds no such file.
func LoadList[T any](dir, name, key string) ([]T, error) {
	b, err := ReadFile(dir, name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m map[string][]T
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return m[key], nil
}

// KeepList adds rs to the list kept under key in dir's file name, each
// replacing the entry it is the same as, unless that entry failed: a
// failure is never forgotten. The file is written whole, then renamed
// over the old one.
func KeepList[T any](dir, name, key string, rs []T, same func(kept, r T) bool, failed func(T) bool) error {
	kept, err := LoadList[T](dir, name, key)
	if err != nil {
		return err
	}
	for _, r := range rs {
		i := slices.IndexFunc(kept, func(k T) bool { return same(k, r) })
		switch {
		case i < 0:
			kept = append(kept, r)
		case !failed(kept[i]):
			kept[i] = r
		}
	}
	return WriteList(dir, name, key, kept)
}

// WriteList writes list to dir/name as {key: list}, atomically (a
// temporary file renamed over it).
func WriteList[T any](dir, name, key string, list []T) error {
	b, err := json.MarshalIndent(map[string][]T{key: list}, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}
