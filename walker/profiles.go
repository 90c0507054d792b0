package walker

import (
	"embed"
	"errors"
	"fmt"

	"github.com/ckpt/ckpt/walker/ignore"
)

// Exclusion profiles, one gitignore-syntax file each. cline.txt and roo.txt
// are verbatim copies of the lists Cline and Roo Code write to their shadow
// repository's info/exclude, in their order.
//
//go:embed profiles/*.txt
var profileFS embed.FS

// ErrUnknownProfile is returned for an Options.Profile that names no profile.
var ErrUnknownProfile = errors.New("unknown exclusion profile")

// Profiles lists the valid Options.Profile values ("" means "default").
var Profiles = []string{"default", "cline", "roo", "none"}

// ProfilePatterns returns the patterns of the named profile, in file order
// (later lines win, as in a gitignore file). "" is "default"; "none" has no
// patterns.
func ProfilePatterns(name string) ([]ignore.Pattern, error) {
	switch name {
	case "":
		name = "default"
	case "none":
		return nil, nil
	case "default", "cline", "roo":
	default:
		return nil, fmt.Errorf("%w %q (want one of %v)", ErrUnknownProfile, name, Profiles)
	}
	data, err := profileFS.ReadFile("profiles/" + name + ".txt")
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	return ignore.ParseLines(data), nil
}
