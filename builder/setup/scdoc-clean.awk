# Filters scdoc's roff output (install.mk's man page rule). scdoc starts every
# paragraph with a paragraph macro (.P), also right after a heading and just
# before a heading or the end of an indented block, where mandoc -T lint warns
# "skipping paragraph macro" (tests/scripts/man-lint.t fails on any warning).
# This drops exactly those; the page reads the same.
function heading(line) { return line ~ /^\.(TH|SH|SS)( |$)/ }
{
	if (held) {
		held = 0
		# The held .P would start an empty paragraph: dropped.
		if (!heading($0) && $0 != ".P" && $0 !~ /^\.RE( |$)/) {
			print ".P"
			last = ".P"
		}
	}
	if ($0 == ".P") {
		if (!heading(last) && last != ".P")
			held = 1
		next
	}
	print
	if ($0 !~ /^\.\\"/)
		last = $0
}
