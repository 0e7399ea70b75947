package db

import (
	"context"
	"sync"
	"testing"
)

// TestTxRetriesADeadlock: two transactions that lock the same two rows in
// opposite orders deadlock on PostgreSQL, which aborts one of them. Tx runs
// the aborted one again, so both commit: two replicas writing the same
// version (the card signing while the store sync mirrors it) must not turn
// an approval into a 500.
func TestTxRetriesADeadlock(t *testing.T) {
	d := openTestPostgres(t)
	ctx := t.Context()
	q := d.eng.querier()
	if _, err := q.exec(ctx, "CREATE TABLE lockorder (id INT PRIMARY KEY, n INT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := q.exec(ctx, "INSERT INTO lockorder VALUES (1, 0), (2, 0)"); err != nil {
		t.Fatal(err)
	}
	// Each transaction locks its first row, waits until the other holds
	// its own first row, then asks for the other's: a deadlock on the
	// first attempt; the barrier lets a second attempt run through.
	var held sync.WaitGroup
	held.Add(2)
	var once [2]sync.Once
	attempts := [2]int{}
	run := func(i int, first, second int) error {
		return d.Tx(ctx, func(tx *Tx) error {
			attempts[i]++
			if _, err := tx.q.exec(ctx, "UPDATE lockorder SET n = n + 1 WHERE id = $1", first); err != nil {
				return err
			}
			once[i].Do(held.Done)
			held.Wait()
			_, err := tx.q.exec(ctx, "UPDATE lockorder SET n = n + 1 WHERE id = $1", second)
			return err
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- run(0, 1, 2) }()
	go func() { errs <- run(1, 2, 1) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a transaction failed: %v", err)
		}
	}
	var n1, n2 int
	if err := q.queryRow(context.Background(), "SELECT (SELECT n FROM lockorder WHERE id = 1), (SELECT n FROM lockorder WHERE id = 2)").Scan(&n1, &n2); err != nil {
		t.Fatal(err)
	}
	if n1 != 2 || n2 != 2 {
		t.Errorf("rows = %d, %d, want 2, 2: each transaction's two updates, once", n1, n2)
	}
	if attempts[0]+attempts[1] != 3 {
		t.Errorf("attempts = %v, want one transaction run twice", attempts)
	}
}
