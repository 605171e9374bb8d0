# The interop scenario with Perl's Net::Stomp (Debian libnet-stomp-perl), written as its users
# write Perl: see tests/interop/peers.py for the modes and what each prints. Net::Stomp writes
# STOMP 1.0 frames and leaves the version to the CONNECT headers it is given: client-individual
# acknowledgement needs 1.1, where an ACK names the message-id and the subscription. It sends
# content-length only when asked to (bytes_message), as a body with NUL bytes needs.
use strict;
use warnings;
use Digest::SHA qw(sha256_hex);
use Encode qw(decode_utf8 encode_utf8);
use JSON::PP;
use Net::Stomp;
use Net::Stomp::Frame;

die "usage: perl_net_stomp.pl PORT scenario NAME | send DEST JSON | receive DEST\n" if @ARGV < 3;
my ($port, $mode) = @ARGV;

sub connect_to {
    # Without reconnect_attempts, Net::Stomp retries a lost connection forever.
    my $stomp = Net::Stomp->new({
        hostname => "127.0.0.1", port => $port, reconnect_attempts => 1,
        initial_reconnect_attempts => 1, timeout => 10, receipt_timeout => 10,
    });
    $stomp->connect({ login => "", passcode => "", "accept-version" => "1.1", host => "localhost" });
    return $stomp;
}

# The next frame of the given command, dying when none comes in time.
sub next_frame {
    my ($stomp, $command) = @_;
    while (1) {
        my $frame = $stomp->receive_frame({ timeout => 10 }) or die "no $command within 10 s\n";
        die "ERROR from the broker: " . ($frame->headers->{message} // "") . "\n" if $frame->command eq "ERROR";
        return $frame if $frame->command eq $command;
    }
}

my $big = "0123456789abcdef" x 65536;
my $nul = "nul\0in\0the\0middle";

if ($mode eq "scenario") {
    my $name = $ARGV[2];
    my $stomp = connect_to();
    $stomp->send({ destination => "/queue/$name.select", body => "red-1", colour => "red" });
    $stomp->send({ destination => "/queue/$name.select", body => "blue-1", colour => "blue" });
    # True once the RECEIPT (with the receipt-id it chose) came back.
    my $receipt = $stomp->send_with_receipt({ destination => "/queue/$name.select", body => "red-2", colour => "red" });
    $stomp->subscribe({
        destination => "/queue/$name.select", id => "select",
        ack => "client-individual", selector => "colour = 'red'",
    });
    my @selected;
    for (1 .. 2) {
        my $frame = next_frame($stomp, "MESSAGE");
        push @selected, $frame->body;
        $stomp->ack({ frame => $frame, subscription => "select" }) if $frame->body eq "red-2";
    }
    $stomp->unsubscribe({ destination => "/queue/$name.select", id => "select" });

    # Net::Stomp has send_transactional (BEGIN, SEND with a receipt, COMMIT) and, for the rest,
    # frames sent as they are.
    $stomp->send_frame(Net::Stomp::Frame->new({ command => "BEGIN", headers => { transaction => "tx-aborted" } }));
    $stomp->send({ destination => "/queue/$name.tx", body => "tx-aborted", transaction => "tx-aborted" });
    $stomp->send_frame(Net::Stomp::Frame->new({ command => "ABORT", headers => { transaction => "tx-aborted" } }));
    $stomp->send_transactional({ destination => "/queue/$name.tx", body => "tx-committed" })
        or die "the transaction did not commit\n";

    $stomp->subscribe({ destination => "/queue/$name.bodies", id => "bodies" });
    $stomp->send({ destination => "/queue/$name.bodies", body => $big, bytes_message => 1 });
    $stomp->send({ destination => "/queue/$name.bodies", body => $nul, bytes_message => 1 });
    my $big_frame = next_frame($stomp, "MESSAGE");
    my $nul_frame = next_frame($stomp, "MESSAGE");
    $stomp->disconnect;
    print encode_json({
        selected => \@selected,
        receipt => $receipt ? JSON::PP::true : JSON::PP::false,
        big => { length => length($big_frame->body), sha256 => sha256_hex($big_frame->body) },
        nul_hex => unpack("H*", $nul_frame->body),
    }), "\n";
} elsif ($mode eq "send") {
    # Net::Stomp writes bytes: text goes out as UTF-8, and comes back in as text below.
    my $message = JSON::PP->new->utf8(0)->decode(encode_utf8($ARGV[3]));
    my %headers = map { $_ => encode_utf8($message->{headers}{$_}) } keys %{ $message->{headers} };
    my $stomp = connect_to();
    $stomp->send_with_receipt({ destination => $ARGV[2], body => encode_utf8($message->{body}), %headers })
        or die "no RECEIPT for the SEND\n";
    $stomp->disconnect;
    print encode_json({ sent => JSON::PP::true }), "\n";
} elsif ($mode eq "receive") {
    my $stomp = connect_to();
    $stomp->subscribe({ destination => $ARGV[2], id => "crossing" });
    my $frame = next_frame($stomp, "MESSAGE");
    $stomp->disconnect;
    my %headers = map { $_ => decode_utf8($frame->headers->{$_}) } keys %{ $frame->headers };
    print encode_json({ headers => \%headers, body => decode_utf8($frame->body) }), "\n";
} else {
    die "unknown mode $mode\n";
}
