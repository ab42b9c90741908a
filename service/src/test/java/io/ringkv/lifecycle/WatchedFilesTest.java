package io.ringkv.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import reactor.core.scheduler.Schedulers;

class WatchedFilesTest {

    /** "Files" held in memory: a number to parse, or null when they cannot be read. */
    private static final class Numbers extends WatchedFiles<String, Integer> {
        String content;
        final List<String> events = new ArrayList<>();

        Numbers(String content) {
            super(Duration.ofSeconds(1), Schedulers.immediate());
            this.content = content;
        }

        @Override
        protected String read() {
            if (content == null) {
                throw new IllegalStateException("cannot read it");
            }
            return content;
        }

        @Override
        protected Object fingerprint(String read) {
            return read;
        }

        @Override
        protected Integer make(String read) {
            return Integer.valueOf(read);
        }

        @Override
        protected void taken(Integer before, Integer after) {
            events.add("taken " + before + " -> " + after);
        }

        @Override
        protected void refused(String why, Integer inForce) {
            events.add("refused (" + why + "), " + inForce + " stays");
        }
    }

    @Test
    void aChangedContentIsTakenAndAnUnchangedOneIsNoChange() {
        var numbers = new Numbers("1");
        assertThat(numbers.load()).isEqualTo(1);
        numbers.check();
        numbers.content = "2";
        numbers.check();
        numbers.check();
        assertThat(numbers.current()).isEqualTo(2);
        assertThat(numbers.events).containsExactly("taken 1 -> 2");
    }

    @Test
    void unusableFilesKeepTheValueInForceAndAreReportedOncePerContent() {
        var numbers = new Numbers("1");
        numbers.load();
        numbers.content = "x";
        numbers.check();
        numbers.check();
        numbers.content = null;
        numbers.check();
        numbers.check();
        numbers.content = "3";
        numbers.check();
        assertThat(numbers.current()).isEqualTo(3);
        assertThat(numbers.events).containsExactly(
                "refused (For input string: \"x\"), 1 stays",
                "refused (cannot read it), 1 stays",
                "taken 1 -> 3");
    }

    @Test
    void theContentInForceBackAfterARefusalIsNoChangeAndALaterRefusalIsNewsAgain() {
        var numbers = new Numbers("1");
        numbers.load();
        numbers.content = null;
        numbers.check();
        numbers.content = "1";
        numbers.check();
        numbers.content = null;
        numbers.check();
        assertThat(numbers.current()).isEqualTo(1);
        assertThat(numbers.events).containsExactly("refused (cannot read it), 1 stays", "refused (cannot read it), 1 stays");
    }

    @Test
    void filesThatAreUnusableAtStartStopIt() {
        assertThatThrownBy(() -> new Numbers("x").load()).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> new Numbers(null).load()).hasMessage("cannot read it");
    }
}
