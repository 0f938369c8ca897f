// Command actionlint is rhysd/actionlint's command line (the linter for GitHub Actions workflow
// files), built from the Go module proxy by e2e/go-tool.sh so the release workflow
// (.github/workflows/release.yml) is linted here, where it cannot run.
package main

import (
	"os"

	"github.com/rhysd/actionlint"
)

func main() {
	cmd := actionlint.Command{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	os.Exit(cmd.Main(os.Args))
}
