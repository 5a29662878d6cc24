package proc

import "testing"

func BenchmarkMembers(b *testing.B) {
	cookie := newCookie(b)
	noLeftovers(b, cookie)
	c := start(b, cookie, "sleep 1012 & sleep 1013 & (sleep 1014 &); wait")
	tree := c.tree(b, cookie)
	eventually(b, "the tree", func() bool { return len(tree.Members(false)) == 4 })
	b.ReportAllocs()
	for b.Loop() {
		if len(tree.Members(false)) != 4 {
			b.Fatal("tree changed")
		}
	}
}

func BenchmarkMembersWithCookie(b *testing.B) {
	cookie := newCookie(b)
	noLeftovers(b, cookie)
	c := start(b, cookie, "sleep 1015 & wait")
	tree := c.tree(b, cookie)
	eventually(b, "the tree", func() bool { return len(tree.Members(true)) == 2 })
	b.ReportAllocs()
	for b.Loop() {
		tree.Members(true)
	}
}
