// Package waf is the write amplification of a drive over a step or cell,
// read from its OCP C0 and SMART logs, as results.json and summary.md
// give it.
package waf

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/units"
)

// WAF is one drive's write amplification over a step or cell: the bytes
// the OCP C0 log says reached the media over the bytes SMART says the
// host wrote, or a note saying why there is no figure.
type WAF struct {
	Drive      string `json:"drive"`
	MediaBytes string `json:"media_bytes_written,omitempty"`
	HostBytes  string `json:"host_bytes_written,omitempty"`
	// WAF is the figure; 0 with Note set.
	WAF  float64 `json:"waf,omitempty"`
	Note string  `json:"note,omitempty"`
	// LifeDriveWrites is how many times the host could fill the drive at
	// this WAF within its rated endurance ([endurance]); 0: not rated.
	LifeDriveWrites float64 `json:"life_drive_writes,omitempty"`
	// Latency is the OCP latency monitor (C3) over a cell: its active
	// bucket counters' increases, or why there are none ("inactive").
	Latency string `json:"latency_monitor,omitempty"`
}

// String is the figure ("2.00") or the note.
func (w WAF) String() string {
	if w.Note != "" {
		return w.Note
	}
	return fmt.Sprintf("%.2f", w.WAF)
}

// Cell is a cell's write amplification in a table: the figure of its
// drive ("2.00"), the range over several ("1.98 – 2.04"), or, when no
// drive has a figure, why in short ("no OCP C0 log"); "" for none.
func Cell(ws []WAF) string {
	var figs []float64
	var notes []string
	for _, w := range ws {
		switch {
		case w.Note != "":
			short, _, _ := strings.Cut(w.Note, " (")
			short, _, _ = strings.Cut(short, ":")
			if !slices.Contains(notes, short) {
				notes = append(notes, short)
			}
		case w.MediaBytes != "":
			figs = append(figs, w.WAF)
		}
	}
	switch {
	case len(figs) == 1:
		return fmt.Sprintf("%.2f", figs[0])
	case len(figs) > 1:
		lo, hi := slices.Min(figs), slices.Max(figs)
		if fmt.Sprintf("%.2f", lo) == fmt.Sprintf("%.2f", hi) {
			return fmt.Sprintf("%.2f", lo)
		}
		return fmt.Sprintf("%.2f – %.2f", lo, hi)
	}
	return strings.Join(notes, "; ")
}

// Row is one drive's WAF over a step or cell (what).
type Row struct {
	What string
	W    WAF
}

// Section writes summary.md's section of each step's and cell's write
// amplification and latency monitor readings, drive by drive, with the
// reason where there is no figure and the drive's life at that WAF where
// the spec rates it; nothing for no rows.
func Section(b *bytes.Buffer, rows []Row) {
	if len(rows) == 0 {
		return
	}
	b.WriteString("## Write amplification (OCP C0)\n\n")
	b.WriteString("Media bytes written (C0 \"Physical media units written\") ÷ host bytes written (SMART data units × 512,000).\n\n")
	b.WriteString("| Step or cell | Drive | Media bytes | Host bytes | WAF | Life (drive writes) | Latency monitor (C3) |\n|---|---|---:|---:|---|---:|---|\n")
	for _, x := range rows {
		life := ""
		if x.W.LifeDriveWrites > 0 {
			life = units.Thousands(x.W.LifeDriveWrites)
		}
		media, host := x.W.MediaBytes, x.W.HostBytes
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", cell(x.What), cell(x.W.Drive), orDash(media), orDash(host),
			orDash(cell(text(x.W))), orDash(life), orDash(cell(x.W.Latency)))
	}
	b.WriteString("\n")
}

func text(w WAF) string {
	if w.Note == "" && w.MediaBytes == "" {
		return ""
	}
	return w.String()
}

func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
