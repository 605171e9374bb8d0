<?php
// The interop scenario with PHP's PECL stomp extension (Debian php-stomp), written as its users
// write PHP: see tests/interop/peers.py for the modes and what each prints.
if ($argc < 3) {
    fwrite(STDERR, "usage: php_stomp.php PORT scenario NAME | send DEST JSON | receive DEST\n");
    exit(2);
}
$port = $argv[1];
$mode = $argv[2];

function connect_to(string $port): Stomp {
    $stomp = new Stomp("tcp://127.0.0.1:$port", "", "", ["accept-version" => "1.2", "host" => "localhost"]);
    $stomp->setReadTimeout(10);
    return $stomp;
}

// The next MESSAGE frame, failing loudly when none comes in time.
function next_message(Stomp $stomp): StompFrame {
    $deadline = microtime(true) + 10;
    while (microtime(true) < $deadline) {
        if ($stomp->hasFrame()) {
            $frame = $stomp->readFrame();
            if ($frame !== false && $frame->command === "MESSAGE") {
                return $frame;
            }
        }
    }
    throw new RuntimeException("no MESSAGE within 10 s");
}

$big = str_repeat("0123456789abcdef", 65536);
$nul = "nul\0in\0the\0middle";

if ($mode === "scenario") {
    $name = $argv[3];
    $stomp = connect_to($port);
    $stomp->send("/queue/$name.select", "red-1", ["colour" => "red"]);
    $stomp->send("/queue/$name.select", "blue-1", ["colour" => "blue"]);
    // With a receipt header, send() waits for the RECEIPT and says whether it came.
    $receipt = $stomp->send("/queue/$name.select", "red-2", ["colour" => "red", "receipt" => "sent-3"]);
    $stomp->subscribe("/queue/$name.select", ["id" => "select", "ack" => "client-individual", "selector" => "colour = 'red'"]);
    $selected = [];
    foreach ([1, 2] as $_) {
        $frame = next_message($stomp);
        $selected[] = $frame->body;
        if ($frame->body === "red-2") {
            // pecl-stomp's ack() names the message-id; STOMP 1.2 wants the MESSAGE's ack header as id.
            $stomp->ack($frame, ["id" => $frame->headers["ack"]]);
        }
    }
    $stomp->unsubscribe("/queue/$name.select", ["id" => "select"]);

    $stomp->begin("tx-aborted");
    $stomp->send("/queue/$name.tx", "tx-aborted", ["transaction" => "tx-aborted"]);
    $stomp->abort("tx-aborted");
    $stomp->begin("tx-committed");
    $stomp->send("/queue/$name.tx", "tx-committed", ["transaction" => "tx-committed"]);
    $stomp->commit("tx-committed");

    $stomp->subscribe("/queue/$name.bodies", ["id" => "bodies"]);
    $stomp->send("/queue/$name.bodies", $big);
    $stomp->send("/queue/$name.bodies", $nul);
    $big_frame = next_message($stomp);
    $nul_frame = next_message($stomp);
    unset($stomp);  // the destructor disconnects
    echo json_encode([
        "selected" => $selected,
        "receipt" => $receipt,
        "big" => ["length" => strlen($big_frame->body), "sha256" => hash("sha256", $big_frame->body)],
        "nul_hex" => bin2hex($nul_frame->body),
    ]), "\n";
} elseif ($mode === "send") {
    $message = json_decode($argv[4], true);
    $stomp = connect_to($port);
    $headers = $message["headers"];
    $headers["receipt"] = "crossing";
    if (!$stomp->send($argv[3], $message["body"], $headers)) {
        throw new RuntimeException("no RECEIPT for the SEND");
    }
    unset($stomp);
    echo json_encode(["sent" => true]), "\n";
} elseif ($mode === "receive") {
    $stomp = connect_to($port);
    $stomp->subscribe($argv[3], ["id" => "crossing"]);
    $frame = next_message($stomp);
    unset($stomp);
    echo json_encode(["headers" => $frame->headers, "body" => $frame->body]), "\n";
} else {
    fwrite(STDERR, "unknown mode $mode\n");
    exit(2);
}
