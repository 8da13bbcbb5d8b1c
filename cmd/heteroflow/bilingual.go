package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Cobra writes its own help headings, its help and completion commands'
// descriptions and its parsing errors (unknown flag, wrong number of
// arguments, required flags) in English. Every text the CLI shows a user
// is bilingual, so those are replaced or completed here, in one place,
// rather than in each command.

// bilingualUsage is cobra's default usage template with each heading
// followed by its Chinese; the structure is cobra's, unchanged.
const bilingualUsage = `Usage / 用法:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases / 别名:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples / 示例:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands / 可用命令:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags / 选项:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags / 全局选项:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasHelpSubCommands}}

Additional help topics / 更多帮助主题:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command. / 使用 "{{.CommandPath}} [command] --help" 查看命令的详细说明。{{end}}
`

// completionShorts are the Chinese halves of cobra's completion command
// and its per-shell subcommands.
var completionShorts = map[string]string{
	"completion": "Generate the autocompletion script for the specified shell / 生成指定 shell 的自动补全脚本",
	"bash":       "Generate the autocompletion script for bash / 生成 bash 自动补全脚本",
	"zsh":        "Generate the autocompletion script for zsh / 生成 zsh 自动补全脚本",
	"fish":       "Generate the autocompletion script for fish / 生成 fish 自动补全脚本",
	"powershell": "Generate the autocompletion script for powershell / 生成 powershell 自动补全脚本",
}

// bilingual installs the bilingual template, the help and completion
// commands' descriptions and every command's --help text. It runs once,
// before Execute, on the whole tree.
func bilingual(root *cobra.Command) {
	root.SetUsageTemplate(bilingualUsage)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Short = "Help about any command / 查看任一命令的帮助"
			c.Long = "Help provides help for any command: heteroflow help [command]. / 查看任一命令的帮助：heteroflow help [命令]。"
			// The root accepts any arguments (strictGroups), so cobra's
			// help would show the root's help for a topic that does not
			// exist; a typo is an error here as everywhere else.
			c.Run = nil
			c.RunE = func(_ *cobra.Command, args []string) error {
				found, rest, err := root.Find(args)
				if err != nil || (len(rest) > 0 && found.HasSubCommands()) {
					return fmt.Errorf("unknown help topic %q / 未知帮助主题\nRun 'heteroflow --help' for usage. / 运行 'heteroflow --help' 查看用法",
						strings.Join(args, " "))
				}
				return found.Help()
			}
		case "completion":
			c.Short = completionShorts["completion"]
			for _, sub := range c.Commands() {
				if s, ok := completionShorts[sub.Name()]; ok {
					sub.Short = s
				}
			}
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// Defined before cobra's own, which it then leaves alone.
		if c.Flags().Lookup("help") == nil {
			c.Flags().BoolP("help", "h", false, "help for "+c.Name()+" / 显示帮助")
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// cobraErrors are the beginnings of the errors cobra and pflag return
// while parsing a command line, with their Chinese.
var cobraErrors = []struct{ prefix, zh string }{
	{"unknown command", "未知命令"},
	{"unknown flag", "未知选项"},
	{"unknown shorthand flag", "未知选项"},
	{"invalid argument", "选项值无效"},
	{"bad flag syntax", "选项格式错误"},
	{"flag needs an argument", "选项缺少值"},
	{"required flag(s)", "缺少必填选项"},
	{"if any flags in the group", "这些选项须同时给出"},
	{"accepts ", "参数个数不对"},
	{"requires at least", "参数个数不对"},
	{"requires at most", "参数个数不对"},
}

// errorText is how main prints err: a parsing error of cobra or pflag,
// which is English only, gets its Chinese and a pointer to the command's
// help; an answer of the API gets the Chinese of its code (apierror.go);
// every other error is printed as it is (HeteroFlow's own errors carry
// both languages already).
func errorText(cmd *cobra.Command, err error) string {
	msg := err.Error()
	for _, e := range cobraErrors {
		if strings.HasPrefix(msg, e.prefix) && !strings.Contains(msg, "/ "+e.zh) {
			path := "heteroflow"
			if cmd != nil {
				path = cmd.CommandPath()
			}
			return msg + " / " + e.zh + "\nRun '" + path + " --help' for usage. / 运行 '" + path + " --help' 查看用法"
		}
	}
	if zh := apiErrorZH(err); zh != "" {
		return msg + " / " + zh
	}
	return msg
}
