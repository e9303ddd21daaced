"""What a kill -9 at the worst moment leaves behind, and how ``--resume`` cleans it up."""

from __future__ import annotations


def test_resume_of_a_finished_crawl_writes_a_lost_seeds_file(clean_web, tmp_path, ch):
    out = tmp_path / "c"
    assert ch.crawl(clean_web, out, max_pages=20).finished
    expected = (out / "seeds.out.txt").read_text()
    # A kill -9 just after the final commit (before the file was renamed into place).
    (out / "seeds.out.txt").unlink()
    done = ch.run_cli("crawl", "--out", str(out), "--resume", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "wrote its missing seeds.out.txt" in done.stderr
    assert (out / "seeds.out.txt").read_text() == expected
    again = ch.run_cli("crawl", "--out", str(out), "--resume", "--quiet")
    assert again.returncode == 2
    assert "nothing to resume" in again.stderr
