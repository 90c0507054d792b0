package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/engine/remote"
)

// openRemote opens a remote's backend, with the endpoint, region and
// credentials of the standard AWS_* variables (never stored), and for an
// encrypted remote sealed with the key its record points to: the key
// file, or the passphrase read now from the variable it names.
func openRemote(ctx context.Context, r engine.RemoteInfo) (engine.Backend, error) {
	b, err := remote.Open(ctx, r.URL, remote.ConfigFromEnv(os.Getenv))
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if !r.Key.Encrypted() {
		return b, nil
	}
	secret, err := remoteSecret(r.Key)
	if err == nil {
		var sealed engine.Backend
		if sealed, err = engine.EncryptRemote(ctx, b, secret); err == nil {
			return sealed, nil
		}
	}
	b.Close()
	return nil, err
}

// remoteSecret resolves how a remote is keyed into its secret: the key
// file's path, or the passphrase in the variable named.
func remoteSecret(k engine.RemoteKey) (engine.RemoteSecret, error) {
	if k.KeyFile != "" {
		return engine.RemoteSecret{KeyFile: k.KeyFile}, nil
	}
	pass := os.Getenv(k.PassphraseEnv)
	if pass == "" {
		return engine.RemoteSecret{}, usageError{fmt.Sprintf("the remote is encrypted with the passphrase in $%s, which is empty or unset", k.PassphraseEnv)}
	}
	return engine.RemoteSecret{Passphrase: []byte(pass)}, nil
}

// keyFlags are the flags that say how a remote is encrypted.
type keyFlags struct {
	keyFile, passphraseEnv, newKey string
}

// register adds --key-file and --passphrase-env to cmd, and --new-key
// when withNew is set.
func (f *keyFlags) register(cmd *cobra.Command, withNew bool) {
	cmd.Flags().StringVar(&f.keyFile, "key-file", "", "encrypt the remote with the key in `FILE` (`ckpt remote keygen FILE` makes one)")
	cmd.Flags().StringVar(&f.passphraseEnv, "passphrase-env", "", "encrypt the remote with the passphrase in environment variable `VAR`, read at each use")
	if withNew {
		cmd.Flags().StringVar(&f.newKey, "new-key", "", "write a new key to `FILE` (0600) and encrypt the remote with it")
	}
}

// key is how the flags say the remote is encrypted (zero: not at all),
// after writing the key --new-key asks for. Key files are recorded by
// absolute path, so that any working directory finds them; local turns a
// path as given into one of this process.
func (f *keyFlags) key(local func(string) string) (engine.RemoteKey, error) {
	set := 0
	for _, v := range []string{f.keyFile, f.passphraseEnv, f.newKey} {
		if v != "" {
			set++
		}
	}
	if set > 1 {
		return engine.RemoteKey{}, usageError{"give one of --key-file, --passphrase-env and --new-key"}
	}
	if f.newKey != "" {
		if err := engine.GenerateRemoteKey(local(f.newKey)); err != nil {
			return engine.RemoteKey{}, err
		}
		f.keyFile = f.newKey
	}
	if f.keyFile == "" {
		return engine.RemoteKey{PassphraseEnv: f.passphraseEnv}, nil
	}
	abs, err := filepath.Abs(local(f.keyFile))
	if err != nil {
		return engine.RemoteKey{}, usageError{err.Error()}
	}
	return engine.RemoteKey{KeyFile: abs}, nil
}

// keygenCommand is `ckpt remote keygen FILE`.
func (a *app) keygenCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "keygen FILE",
		Short: "Write a new random key for an encrypted remote to FILE (0600); keep a copy: without it the remote cannot be read",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := engine.GenerateRemoteKey(a.localPath(args[0])); err != nil {
				return err
			}
			a.printOrSay(map[string]string{"key_file": args[0]}, "wrote a new key to %s", args[0])
			return nil
		},
	}
}

// localPath is path as given on the command line, made relative to the
// client's working directory when a server runs the command for it.
func (a *app) localPath(path string) string {
	if a.server == nil || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(a.server.cwd, path)
}

// keyingText describes how a remote is encrypted, for remote list.
func keyingText(k engine.RemoteKey) string {
	switch {
	case k.KeyFile != "":
		return "\tencrypted, key file " + k.KeyFile
	case k.PassphraseEnv != "":
		return "\tencrypted, passphrase in $" + k.PassphraseEnv
	}
	return ""
}
