// Package casefile holds the JSON contract between the Python side of the conformance suite and
// the oracle: one case in, one result out, both as single lines of JSON.
package casefile

import (
	"encoding/json"
	"time"
)

// Case is one scheduling input: the same Kubernetes objects `manage.py schedule` reads, and the
// scheduling time every time-dependent rule is evaluated at.
type Case struct {
	ID        string            `json:"id"`
	Family    string            `json:"family"`
	Now       time.Time         `json:"now"`
	Manifests []json.RawMessage `json:"manifests"`
}

// Result is the oracle's answer for one case: one verdict per Placement / ClusterResourcePlacement
// of the input, in input order, or the reason the upstream code could not be run on it.
type Result struct {
	ID         string `json:"id"`
	Placements []any  `json:"placements"`
	// Error is set when the case could not be scheduled at all (for example an object the upstream
	// types refuse to decode); a rejected case is a disagreement only if our side accepted it.
	Error string `json:"error,omitempty"`
	// ElapsedNs is the time spent inside the upstream scheduling calls only, without decoding,
	// process start or output, so benchmarks can compare schedulers and not JSON handling.
	ElapsedNs int64 `json:"elapsedNs"`
}

// Object is the part of a manifest every kind shares, enough to dispatch on kind.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// Kind reads the kind of a raw manifest; an unreadable manifest has kind "".
func Kind(raw json.RawMessage) string {
	var object Object
	if err := json.Unmarshal(raw, &object); err != nil {
		return ""
	}
	return object.Kind
}
