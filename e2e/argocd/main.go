// Command argocd runs the chart's Argo CD health checks with Argo CD's own code: the health.lua
// of each folder given (charts/kafka-config-operator/argocd/<group>/<Kind>) goes through
// github.com/argoproj/argo-cd/v3/util/lua, on each fixture of its health_test.yaml (Argo's own
// test format), twice:
//
//   - as Argo CD runs a check installed with `resource.customizations.health.<group>_<Kind>` in
//     argocd-cm (ResourceHealthOverrides.GetResourceHealth: the sandbox without the standard
//     libraries, `useOpenLibs` unset), and
//   - as Argo CD's own resource_customizations tests run the built-in checks (VM{UseOpenLibs:
//     true}.ExecuteHealthLua).
//
// Prints `ok     - …` / `FAILED - …` per case (e2e/lib.sh's format, read by e2e/chart/test.sh)
// and exits 1 when a case failed.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	appv1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

type fixtures struct {
	Tests []struct {
		InputPath    string              `json:"inputPath"`
		HealthStatus health.HealthStatus `json:"healthStatus"`
	} `json:"tests"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: argocd DIR... (each with health.lua and health_test.yaml)")
		os.Exit(2)
	}
	failed := 0
	for _, dir := range os.Args[1:] {
		failed += check(dir)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

// check runs one folder's fixtures and returns how many failed.
func check(dir string) int {
	label := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
	script, err := os.ReadFile(filepath.Join(dir, "health.lua"))
	if err != nil {
		fmt.Printf("FAILED - %s: %v\n", label, err)
		return 1
	}
	raw, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
	var tests fixtures
	if err == nil {
		err = yaml.Unmarshal(raw, &tests)
	}
	if err != nil || len(tests.Tests) == 0 {
		fmt.Printf("FAILED - %s: health_test.yaml: no tests (%v)\n", label, err)
		return 1
	}
	failed := 0
	for _, test := range tests.Tests {
		obj, err := object(filepath.Join(dir, test.InputPath))
		if err != nil {
			fmt.Printf("FAILED - %s %s: %v\n", label, test.InputPath, err)
			failed++
			continue
		}
		key := lua.GetConfigMapKey(obj.GroupVersionKind())
		sandboxed := lua.ResourceHealthOverrides{key: appv1.ResourceOverride{HealthLua: string(script)}}
		for _, run := range []struct {
			mode string
			eval func() (*health.HealthStatus, error)
		}{
			{"argocd-cm sandbox", func() (*health.HealthStatus, error) { return sandboxed.GetResourceHealth(obj) }},
			{"open libs", func() (*health.HealthStatus, error) {
				return lua.VM{UseOpenLibs: true}.ExecuteHealthLua(obj, string(script))
			}},
		} {
			name := fmt.Sprintf("%s %s (%s)", label, test.InputPath, run.mode)
			got, err := run.eval()
			switch {
			case err != nil:
				fmt.Printf("FAILED - %s: error: %v\n", name, err)
				failed++
			case got == nil:
				fmt.Printf("FAILED - %s: Argo CD found no health check for %s\n", name, key)
				failed++
			case got.Status != test.HealthStatus.Status || got.Message != test.HealthStatus.Message:
				fmt.Printf("FAILED - %s: expected %s '%s', got %s '%s'\n", name,
					test.HealthStatus.Status, test.HealthStatus.Message, got.Status, got.Message)
				failed++
			default:
				fmt.Printf("ok     - %s -> %s '%s'\n", name, got.Status, got.Message)
			}
		}
	}
	return failed
}

func object(path string) (*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: obj}, nil
}
