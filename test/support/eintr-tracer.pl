#!/usr/bin/perl
# Acts out how bpftrace 0.24 and later lose their END output, for
# test/session.test.js: it prints a line every millisecond with blocking
# writes; its SIGTERM/SIGINT handler is installed without SA_RESTART, so a
# signal that lands while a write is blocked (its reader, nodetrace, not
# reading: the socket full) cuts that write short with EINTR, and from then
# on it writes nothing, as a C++ stream that has failed once does; it then
# ends as asked, exit 0, its END marker and map never written. Told while no
# write is blocked, it prints them.
# In Perl, not JavaScript: node restarts a write that a signal interrupts
# (libuv installs its handlers with SA_RESTART); bpftrace does not. Only
# perl-base's modules (Debian's essential package), nothing to install.
use strict;
use warnings;
use POSIX ();

my $heard = 0;
my $action = POSIX::SigAction->new(sub { $heard = 1 }, POSIX::SigSet->new(), 0);
POSIX::sigaction(POSIX::SIGTERM(), $action);
POSIX::sigaction(POSIX::SIGINT(), $action);

my $failed = 0;
sub out {
  my ($text) = @_;
  my $done = 0;
  while (!$failed && $done < length $text) {
    my $n = syswrite(STDOUT, $text, length($text) - $done, $done);
    if (defined $n) { $done += $n; } else { $failed = 1; }
  }
}

out("Attaching 1 probe...\nHit Ctrl-C to end.\n");
my $events = 0;
until ($heard) {
  out(sprintf("EVENT %d\n", ++$events));
  select(undef, undef, undef, 0.001);   # a millisecond
}
out("Tracing ended.\n\n\n\@events: $events\n");
exit 0;
