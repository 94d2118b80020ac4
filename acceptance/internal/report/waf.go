package report

import (
	"fmt"
	"slices"
	"strings"
)

func hasWAF(rows []Result) bool {
	for _, r := range rows {
		for _, w := range r.WAF {
			if w.MediaBytes != "" || w.Note != "" {
				return true
			}
		}
	}
	return false
}

// WAFCell is a cell's write amplification in a table: the figure of its
// drive ("2.00"), the range over several ("1.98 – 2.04"), or, when no
// drive has a figure, why in short ("no OCP C0 log"); "" for none.
func WAFCell(ws []WAF) string {
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

// writeWAF writes each step's and cell's write amplification and latency
// monitor readings, drive by drive, with the reason where there is no
// figure and the drive's life at that WAF where the spec rates it.
func (s *summary) writeWAF() {
	r, b := s.r, &s.b
	type row struct {
		what string
		w    WAF
	}
	var rows []row
	for _, st := range r.Steps {
		for _, w := range st.WAF {
			rows = append(rows, row{fmt.Sprintf("step %d: %s", st.N, st.Name), w})
		}
	}
	for _, res := range r.Results {
		for _, w := range res.WAF {
			rows = append(rows, row{res.Test, w})
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("## Write amplification (OCP C0)\n\n")
	b.WriteString("Media bytes written (C0 \"Physical media units written\") ÷ host bytes written (SMART data units × 512,000).\n\n")
	b.WriteString("| Step or cell | Drive | Media bytes | Host bytes | WAF | Life (drive writes) | Latency monitor (C3) |\n|---|---|---:|---:|---|---:|---|\n")
	for _, x := range rows {
		life := ""
		if x.w.LifeDriveWrites > 0 {
			life = Thousands(x.w.LifeDriveWrites)
		}
		media, host := x.w.MediaBytes, x.w.HostBytes
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", cell(x.what), cell(x.w.Drive), orDash(media), orDash(host),
			orDash(cell(wafText(x.w))), orDash(life), orDash(cell(x.w.Latency)))
	}
	b.WriteString("\n")
}

func wafText(w WAF) string {
	if w.Note == "" && w.MediaBytes == "" {
		return ""
	}
	return w.String()
}
