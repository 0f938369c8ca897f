// Command kstatus prints what kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status, the library
// Flux, kpt and cli-utils based tools read health with) computes for live objects: the output of
// `kubectl get -o json` (one object or a List) on stdin, one JSON line per object on stdout:
//
//	{"kind":"KafkaToolConfig","namespace":"team-a","name":"orders","status":"Current","message":"Resource is Ready"}
//
// tests/e2e_kstatus.rs runs it against objects on the control plane (e2e/controlplane).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type line struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kstatus:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	var object unstructured.Unstructured
	if err := object.UnmarshalJSON(data); err != nil {
		return fmt.Errorf("not a Kubernetes object or List: %w", err)
	}
	var items []unstructured.Unstructured
	if object.IsList() {
		list, err := object.ToList()
		if err != nil {
			return err
		}
		items = list.Items
	} else {
		items = []unstructured.Unstructured{object}
	}
	encoder := json.NewEncoder(out)
	for i := range items {
		result, err := status.Compute(&items[i])
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", items[i].GetKind(), items[i].GetNamespace(), items[i].GetName(), err)
		}
		if err := encoder.Encode(line{
			Kind:      items[i].GetKind(),
			Namespace: items[i].GetNamespace(),
			Name:      items[i].GetName(),
			Status:    result.Status.String(),
			Message:   result.Message,
		}); err != nil {
			return err
		}
	}
	return nil
}
