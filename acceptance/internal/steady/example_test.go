package steady_test

import (
	"fmt"

	"github.com/drivequal/drivequal/acceptance/internal/steady"
)

func ExampleRule_Track() {
	// Mean IOPS of each 1-minute round of a random-write preconditioning.
	rounds := []float64{50000, 70000, 90000, 110000, 130000, 150000, 150000, 151000, 149000, 150000, 150000}
	at, v := steady.DefaultRule.Track(rounds)
	fmt.Printf("round %d (minute %d): %v\n", at, at, v)
	fmt.Println(steady.DefaultRule.Check(rounds[:7])) // rounds 3-7: 90k … 150k
	fmt.Println(steady.DefaultRule.Check(rounds[:3]))
	// Output:
	// round 10 (minute 10): steady state reached: window mean 150,000 IOPS, range 1.3 % (limit 20 %), excursion 0.3 % (limit 10 %)
	// not reached: window mean 126,000 IOPS, range 47.6 % (limit 20 %), excursion 50.8 % (limit 10 %)
	// not reached: 3 rounds, fewer than the 5-round window
}
