package mcp

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/transport"
)

// BenchmarkSkillsList lists 1,000 skills of 20 files each (every page;
// one page of 1,000 entries at the default page size), in process, in
// both eras. Listing reads no file, so it hashes none: the files are
// hashed once, by AddSkills. The benchmark reports the files the server
// opened per listing (files-opened/op, which must be 0) and fails otherwise.
func BenchmarkSkillsList(b *testing.B) {
	const skills, filesPerSkill = 1000, 20
	m := fstest.MapFS{}
	for i := range skills {
		name := fmt.Sprintf("skill-%04d", i)
		m["skills/"+name+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: A benchmark skill.\n---\nBody.\n")}
		for j := range filesPerSkill - 1 {
			m[fmt.Sprintf("skills/%s/references/file-%02d.md", name, j)] = &fstest.MapFile{Data: []byte("content\n")}
		}
	}
	for _, era := range []Era{EraHandshake, EraModern} {
		b.Run(era.String(), func(b *testing.B) {
			fsys := &countingFS{FS: m}
			s := NewServer(&Implementation{Name: "bench", Version: "1"}, nil)
			if err := s.AddSkills(fsys, "skills"); err != nil {
				b.Fatal(err)
			}
			if n := fsys.opens.Load(); n < skills*filesPerSkill {
				b.Fatalf("AddSkills opened %d files, fewer than the %d it hashes", n, skills*filesPerSkill)
			}
			ctx := context.Background()
			ct, st := transport.NewInMemoryTransports()
			ss, err := s.Connect(ctx, st)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: era}).Connect(ctx, ct)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cs.Close(); ss.Close(); ss.Wait() })
			opened := fsys.opens.Load()
			b.ReportAllocs()
			for b.Loop() {
				n, files := 0, 0
				for e, err := range cs.Skills(ctx) {
					if err != nil {
						b.Fatal(err)
					}
					n++
					files += len(e.Resources.Files)
				}
				if n != skills || files != skills*filesPerSkill {
					b.Fatalf("listed %d skills, %d files", n, files)
				}
			}
			n := fsys.opens.Load() - opened
			b.ReportMetric(float64(n)/float64(b.N), "files-opened/op")
			if n != 0 {
				b.Fatalf("listing opened %d files", n)
			}
		})
	}
}

// BenchmarkSkillVerify compares the client's verification of a 1 MiB
// skill file (size, then digest) with crypto/sha256 over the same bytes.
func BenchmarkSkillVerify(b *testing.B) {
	content := make([]byte, 1<<20)
	for i := range content {
		content[i] = byte(i)
	}
	sum := sha256.Sum256(content)
	want := &SkillResource{URI: "skill://a/f", Digest: skillDigest(sum[:]), Size: int64(len(content))}
	b.Run("verify", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			if err := verifySkillFile(content, want); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sha256", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			sha256.Sum256(content)
		}
	})
}
