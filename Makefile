# The side-by-side benchmark harness and the tests.

.PHONY: bench bench-quick test

# bench runs the harness (a few minutes) and rewrites docs/benchmarks.md.
bench:
	go run ./bench

# bench-quick is a smoke run of the harness, under a minute.
bench-quick:
	go run ./bench -quick -o -

test:
	go test ./...
