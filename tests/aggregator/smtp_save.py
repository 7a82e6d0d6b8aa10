# An aiosmtpd handler (`python3 -m aiosmtpd -c smtp_save.Save DIR`, with this folder on
# PYTHONPATH) for tests/aggregator/mail.t and the lab's list (tests/lab/list.sh).
# Answers each DATA as the next line of DIR/plan says (250 saves the message as received in
# DIR/received/N.eml and its envelope in N.env; 451 and 550 refuse it; drop closes the
# connection without an answer); no line left: 250. Each answer is appended to DIR/answers.
import os


class Save:
    def __init__(self, directory):
        self.dir = directory
        self.count = 0

    @classmethod
    def from_cli(cls, parser, *args):
        return cls(args[0])

    def next_answer(self):
        path = os.path.join(self.dir, "plan")
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            lines = []
        if not lines:
            return "250"
        with open(path + ".new", "w") as f:
            f.write("".join(line + "\n" for line in lines[1:]))
        os.rename(path + ".new", path)
        return lines[0]

    async def handle_DATA(self, server, session, envelope):
        answer = self.next_answer()
        with open(os.path.join(self.dir, "answers"), "a") as f:
            f.write(answer + "\n")
        if answer == "drop":
            server.transport.close()
            return "421 closing"
        if answer == "451":
            return "451 4.3.0 the test says later"
        if answer == "550":
            return "550 5.7.1 the test refuses this message"
        self.count += 1
        name = os.path.join(self.dir, "received", "%d" % self.count)
        with open(name + ".eml", "wb") as f:
            f.write(envelope.original_content)
        with open(name + ".env", "w") as f:
            f.write(envelope.mail_from + "\n")
            f.write("".join(r + "\n" for r in envelope.rcpt_tos))
        return "250 OK saved"
