# The side-by-side benchmark harness and the tests.

.PHONY: bench bench-quick test cover release cross

# bench runs the harness (a few minutes) and rewrites docs/benchmarks.md.
bench:
	go run ./bench

# bench-quick is a smoke run of the harness, under a minute.
bench-quick:
	go run ./bench -quick -o -

test:
	go test ./...

# cover prints what the tests cover, per package: the unit tests alone and
# with the e2e tests (the whole suite once); profiles in cover/.
cover:
	scripts/cover

# release builds static binaries for linux/amd64, linux/arm64,
# darwin/arm64 and darwin/amd64 into dist/, with SHA256SUMS.
release:
	scripts/release

# cross builds and vets every release target (CI runs it).
cross:
	scripts/cross
