package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/emulator/suggest"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/modelfile"
)

var shells = []string{"bash", "zsh", "fish", "powershell"}

// completionCommand prints cobra's completion script for a shell; the
// script asks the binary itself (its hidden __complete command) what to
// offer, so completion follows the commands, flags and profiles of the
// hilrig it runs.
func completionCommand(root *cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   "completion " + strings.Join(shells, "|"),
		Short: "print the shell completion script for hilrig",
		Long: `Completes commands, flags, shipped profile and model names, and files for
the flags that take one. To load it:

  bash:  source <(hilrig completion bash)       (or save it in /etc/bash_completion.d/hilrig)
         it needs the bash-completion package, loaded first (apt-get install bash-completion;
         source /usr/share/bash-completion/bash_completion where ~/.bashrc does not)
  zsh:   hilrig completion zsh > "${fpath[1]}/_hilrig"
  fish:  hilrig completion fish > ~/.config/fish/completions/hilrig.fish
  powershell:  hilrig completion powershell | Out-String | Invoke-Expression`,
		Args: cobra.MatchAll(positional(1, 1), func(c *cobra.Command, args []string) error {
			if !slices.Contains(shells, args[0]) {
				return fmt.Errorf("no completion for the shell %q (there is for %s)%s", args[0], strings.Join(shells, ", "), suggest.DidYouMean(args[0], shells))
			}
			return nil
		}),
		ValidArgs: shells,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int {
		out := c.OutOrStdout()
		var err error
		switch args[0] {
		case "bash":
			if err = root.GenBashCompletionV2(out, true); err == nil {
				_, err = io.WriteString(out, bashNeedsPackage)
			}
		case "zsh":
			err = root.GenZshCompletion(out)
		case "fish":
			err = root.GenFishCompletion(out, true)
		case "powershell":
			err = root.GenPowerShellCompletionWithDesc(out)
		}
		if err != nil {
			return fail(c.ErrOrStderr(), exitFail, err)
		}
		return exitOK
	})
	return c
}

// bashNeedsPackage follows cobra's bash script: the script splits the
// command line with the bash-completion package's _get_comp_words_by_ref
// and completes files with its _filedir, so without the package every
// Tab said "_get_comp_words_by_ref: command not found". Where the
// package is not loaded, a Tab now says what to install and load. (The
// package's own _init_completion, which the script prefers, is not
// wrapped: where it is defined, so is the rest.)
const bashNeedsPackage = `
# hilrig: the script above needs the bash-completion package.
__hilrig_init_completion()
{
    COMPREPLY=()
    if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
        printf '\nhilrig: completion needs the bash-completion package, which this shell has not loaded: install it (apt-get install bash-completion, brew install bash-completion@2) and load it before this script (source /usr/share/bash-completion/bash_completion)\n' >&2
        return 1
    fi
    _get_comp_words_by_ref "$@" cur prev words cword
}
`

// completeFlags registers how each of c's flags completes, by the flag's
// name, which means the same in every command: files to write, bench
// files, profile names, or nothing a shell could guess.
func completeFlags(c *cobra.Command) {
	fs := c.Flags()
	fs.VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "trace", "summary", "signals", "csv", "svg", "junit", "out", "token-file":
			cobra.MarkFlagFilename(fs, f.Name)
		case "report":
			cobra.MarkFlagDirname(fs, f.Name)
		case "bench":
			cobra.MarkFlagFilename(fs, f.Name, "yaml", "yml")
		case "profile":
			c.RegisterFlagCompletionFunc(f.Name, completeProfiles)
		case "cut":
			c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions([]string{"CP1", "CP2"}, cobra.ShellCompDirectiveNoFileComp))
		case "output":
			c.RegisterFlagCompletionFunc(f.Name, completeFromModel(func(m *modelfile.LoadedModel) []string { return m.Signals() }))
		case "input":
			c.RegisterFlagCompletionFunc(f.Name, completeFromModel(func(m *modelfile.LoadedModel) []string { return inputNames(m.Plant) }))
		case "cuts":
			c.RegisterFlagCompletionFunc(f.Name, completeCuts)
		case "param":
			c.RegisterFlagCompletionFunc(f.Name, completeParams)
		default:
			c.RegisterFlagCompletionFunc(f.Name, cobra.NoFileCompletions)
		}
	})
}

// yamlFiles is file completion limited to YAML files (and directories).
func yamlFiles() ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// completeProfiles completes a PROFILE: a shipped profile's name (with its
// description) or a YAML file here; once a path is begun, or no name fits,
// YAML files and directories.
func completeProfiles(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, name := range profiles.Shipped() {
		if strings.HasPrefix(name, toComplete) {
			description := ""
			if p, err := profiles.Load(name); err == nil {
				description = p.Description
			}
			out = append(out, cobra.CompletionWithDesc(name, description))
		}
	}
	return namesOrFiles(out, toComplete)
}

// completeModels completes a MODEL: a built-in model's name or a model file.
func completeModels(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, b := range plant.Builtins() {
		if strings.HasPrefix(b.Name, toComplete) {
			out = append(out, cobra.CompletionWithDesc(b.Name, b.Description))
		}
	}
	return namesOrFiles(out, toComplete)
}

// namesOrFiles offers the names that fit and the YAML files here that do,
// or, once toComplete is a path or no name fits, the shell's own YAML file
// completion.
func namesOrFiles(names []cobra.Completion, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(names) == 0 || strings.ContainsAny(toComplete, `/\~`) || strings.HasPrefix(toComplete, ".") {
		return yamlFiles()
	}
	entries, _ := os.ReadDir(".")
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml") && strings.HasPrefix(e.Name(), toComplete) {
			names = append(names, e.Name())
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeFromModel completes a flag from the model named by the
// command's argument.
func completeFromModel(names func(m *modelfile.LoadedModel) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		m, err := modelfile.LoadModel(args[0], nil)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, n := range names(m) {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeCuts completes the last of a comma-separated list of cuts.
func completeCuts(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	i := strings.LastIndex(toComplete, ",") + 1
	done := strings.Split(toComplete[:i], ",")
	cuts, directive := completeFromModel(func(m *modelfile.LoadedModel) []string {
		return slices.DeleteFunc(slices.Clone(m.CutNames()), func(cut string) bool { return slices.Contains(done, cut) })
	})(c, args, toComplete[i:])
	for j := range cuts {
		cuts[j] = toComplete[:i] + cuts[j]
	}
	return cuts, directive | cobra.ShellCompDirectiveNoSpace
}

// completeParams completes a built-in model's parameter names, up to the
// "=" of name=value.
func completeParams(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	params, directive := completeFromModel(func(m *modelfile.LoadedModel) []string {
		if m.Builtin == nil {
			return nil
		}
		var names []string
		for _, p := range m.Builtin.Params {
			names = append(names, p.Name+"=")
		}
		return names
	})(c, args, toComplete)
	return params, directive | cobra.ShellCompDirectiveNoSpace
}
