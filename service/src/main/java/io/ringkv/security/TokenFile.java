package io.ringkv.security;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The client token file: one {@code token role [name]} per line, fields separated by blanks,
 * {@code #} comments and blank lines allowed. A file with any bad line is refused as a whole: a
 * half-read file could drop a token that clients still use, or keep one an operator removed.
 * Messages name lines, never the tokens on them, since they are logged.
 */
public final class TokenFile {

    /** Shorter tokens are guessable; a generated one (32 random bytes, hex or base64) is far longer. */
    public static final int MIN_TOKEN_LENGTH = 16;

    /** A token the file grants, with the line it is on. */
    public record Grant(String token, Client client, int line) {
        @Override
        public String toString() {
            // Never the token: a grant may end up in a log line or a test's failure message.
            return "Grant[" + client + " on line " + line + "]";
        }
    }

    /** The file cannot be used; the message lists each bad line. */
    public static final class InvalidTokenFileException extends IllegalArgumentException {
        InvalidTokenFileException(String message) {
            super(message);
        }
    }

    private TokenFile() {
    }

    /**
     * The grants of a file's text, none for a file of only comments and blank lines; or an
     * {@link InvalidTokenFileException} naming every bad line.
     */
    public static List<Grant> parse(String text) {
        List<Grant> grants = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Map<String, Integer> lineOfToken = new HashMap<>();
        String[] lines = text.split("\\R", -1);
        for (int index = 0; index < lines.length; index++) {
            int number = index + 1;
            String line = lines[index].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] fields = line.split("\\s+");
            if (fields.length < 2 || fields.length > 3) {
                problems.add("line " + number + ": expected 'token role [name]', found " + fields.length + " fields");
                continue;
            }
            String token = fields[0];
            Role role = Role.ofLabel(fields[1]);
            if (token.length() < MIN_TOKEN_LENGTH) {
                problems.add("line " + number + ": the token is shorter than " + MIN_TOKEN_LENGTH + " characters");
            } else if (role == null) {
                problems.add("line " + number + ": unknown role '" + printable(fields[1]) + "' (use read, write or admin)");
            } else if (lineOfToken.containsKey(token)) {
                problems.add("line " + number + ": the same token as line " + lineOfToken.get(token));
            } else {
                lineOfToken.put(token, number);
                grants.add(new Grant(token, new Client(fields.length == 3 ? fields[2] : "line " + number, role), number));
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidTokenFileException(String.join("; ", problems));
        }
        return List.copyOf(grants);
    }

    /** A bad role word as it can be logged: short, without control characters. */
    private static String printable(String word) {
        String shown = word.length() > 20 ? word.substring(0, 20) + "..." : word;
        return shown.replaceAll("\\p{Cntrl}", "?");
    }
}
