package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

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
		return engine.RemoteKey{}, protocol.UsageError("give one of --key-file, --passphrase-env and --new-key")
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
		return engine.RemoteKey{}, protocol.UsageError(err.Error())
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
