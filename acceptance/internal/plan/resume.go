package plan

// startStates is a copy of each drive's state at the plan's start: Start,
// else nothing done yet.
func (p *Planner) startStates() []State {
	states := make([]State, len(p.Drives))
	copy(states, p.Start)
	return states
}

// Resumed is the state a resumed run knows a drive to be in, given what
// its recording shows: a drive whose fill was read back whole is filled
// (random writes since then leave it filled), but what it went through
// after that is unknown, so its next random cells are preconditioned
// again and a sequential cell is purged and filled again. A drive whose
// fill was not read back is in an unknown state: purged and filled
// again before anything that needs it.
func Resumed(filled bool) State { return State{Filled: filled} }
