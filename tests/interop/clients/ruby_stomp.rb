# The interop scenario with Ruby's stomp gem (Debian ruby-stomp), written as its users write Ruby:
# see tests/interop/peers.py for the modes and what each prints.
require "digest"
require "json"
require "stomp"
require "timeout"

abort("usage: ruby_stomp.rb PORT scenario NAME | send DEST JSON | receive DEST") if ARGV.length < 3
port = Integer(ARGV[0])
mode = ARGV[1]

def connect_to(port)
  Stomp::Connection.new(
    hosts: [{ login: "", passcode: "", host: "127.0.0.1", port: port }],
    connect_headers: { "accept-version" => "1.2", "host" => "localhost" },
    reliable: false,
    connect_timeout: 10,
  )
end

# The next frame of the given command, failing loudly when none comes in time.
def next_frame(connection, command)
  Timeout.timeout(10) do
    loop do
      frame = connection.receive
      raise "the connection closed" if frame.nil?
      raise "ERROR from the broker: #{frame.headers['message']}" if frame.command == "ERROR"
      return frame if frame.command == command
    end
  end
end

big = "0123456789abcdef" * 65536
nul = "nul\0in\0the\0middle"

case mode
when "scenario"
  name = ARGV[2]
  connection = connect_to(port)
  connection.publish("/queue/#{name}.select", "red-1", { colour: "red" })
  connection.publish("/queue/#{name}.select", "blue-1", { colour: "blue" })
  connection.publish("/queue/#{name}.select", "red-2", { colour: "red", receipt: "sent-3" })
  receipt = next_frame(connection, "RECEIPT").headers["receipt-id"] == "sent-3"
  connection.subscribe("/queue/#{name}.select", { ack: "client-individual", selector: "colour = 'red'" }, "select")
  selected = Array.new(2) do
    frame = next_frame(connection, "MESSAGE")
    connection.ack(frame.headers["ack"]) if frame.body == "red-2"
    frame.body
  end
  connection.unsubscribe("/queue/#{name}.select", {}, "select")

  connection.begin("tx-aborted")
  connection.publish("/queue/#{name}.tx", "tx-aborted", { transaction: "tx-aborted" })
  connection.abort("tx-aborted")
  connection.begin("tx-committed")
  connection.publish("/queue/#{name}.tx", "tx-committed", { transaction: "tx-committed" })
  connection.commit("tx-committed")

  connection.subscribe("/queue/#{name}.bodies", {}, "bodies")
  connection.publish("/queue/#{name}.bodies", big)
  connection.publish("/queue/#{name}.bodies", nul)
  big_frame = next_frame(connection, "MESSAGE")
  nul_frame = next_frame(connection, "MESSAGE")
  connection.disconnect
  puts JSON.generate(
    selected: selected,
    receipt: receipt,
    big: { length: big_frame.body.bytesize, sha256: Digest::SHA256.hexdigest(big_frame.body) },
    nul_hex: nul_frame.body.unpack1("H*"),
  )
when "send"
  message = JSON.parse(ARGV[3])
  connection = connect_to(port)
  connection.publish(ARGV[2], message["body"], message["headers"].merge("receipt" => "crossing"))
  receipt = next_frame(connection, "RECEIPT")
  raise "wrong receipt #{receipt.headers}" unless receipt.headers["receipt-id"] == "crossing"
  connection.disconnect
  puts JSON.generate(sent: true)
when "receive"
  connection = connect_to(port)
  connection.subscribe(ARGV[2], {}, "crossing")
  frame = next_frame(connection, "MESSAGE")
  connection.disconnect
  puts JSON.generate(headers: frame.headers, body: frame.body)
else
  abort("unknown mode #{mode}")
end
