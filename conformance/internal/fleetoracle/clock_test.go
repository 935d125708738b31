package fleetoracle

import (
	"testing"
	"time"
)

func mustTime(t *testing.T, value string) time.Time {
	t.Helper()
	parsed, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

// The real clock, read through the shift, lands in the second before `now` rounded up to a whole
// second, with the rest of that second as headroom.
func TestClockWindow(t *testing.T) {
	real := mustTime(t, "2026-11-27T07:00:00.300Z")
	for _, tc := range []struct {
		now, end, reads string
	}{
		{now: "2024-05-01T12:00:00Z", end: "2024-05-01T12:00:00Z", reads: "2024-05-01T11:59:59.3Z"},
		{now: "2024-05-01T12:00:00.5Z", end: "2024-05-01T12:00:01Z", reads: "2024-05-01T12:00:00.3Z"},
	} {
		w := newClockWindow(mustTime(t, tc.now), real)
		if !w.end.Equal(mustTime(t, tc.end)) || !real.Add(-w.shift).Equal(mustTime(t, tc.reads)) {
			t.Errorf("now %s: end %s, reads %s", tc.now, w.end, real.Add(-w.shift))
		}
		if w.shift%time.Second != 0 || w.headroom != 700*time.Millisecond {
			t.Errorf("now %s: shift %s, headroom %s", tc.now, w.shift, w.headroom)
		}
		if !w.holds(real.Add(w.headroom)) || w.holds(real.Add(w.headroom+time.Nanosecond)) {
			t.Errorf("now %s: the window should hold exactly for the headroom", tc.now)
		}
	}
}
