// Pins stakater Reloader for the side-by-side benchmark (e2e/bench/reloader.sh, issue 30).
// Reloader's own go.mod has replace directives, which `go install mod@version` refuses; a module
// that requires it and repeats those replaces builds it. openshift/api: Reloader pins a pseudo-version
// the proxy does not serve; this is the one its openshift/client-go requires.
module kco.local/e2e/reloader

go 1.26.8

require github.com/stakater/Reloader v1.4.22

replace (
	github.com/go-check/check => github.com/go-check/check v0.0.0-20201130134442-10cb98267c6c
	github.com/openshift/api => github.com/openshift/api v0.0.0-20260326111139-30c2ef7a272e
	k8s.io/api v0.0.0 => k8s.io/api v0.35.3
	k8s.io/apimachinery v0.0.0 => k8s.io/apimachinery v0.35.3
	k8s.io/client-go v0.0.0 => k8s.io/client-go v0.35.3
	k8s.io/kubectl v0.0.0 => k8s.io/kubectl v0.35.3
)
