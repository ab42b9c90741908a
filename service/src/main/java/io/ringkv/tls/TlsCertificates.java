package io.ringkv.tls;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.config.InvalidSettingException;
import io.ringkv.lifecycle.PeriodicTask;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The node's certificates as the files hold them now. Read once at start, where a missing or
 * broken file stops the node; then read again every {@code ringkv.tls.check-interval}, off the
 * event loops, and when they changed, parsed and made into new TLS contexts: connections opened
 * from then on use them, open ones go on with the ones they started with. Files that do not
 * make a valid set (a rotation caught half written, a broken file) leave the old contexts in
 * place, and the log says why, once per content.
 *
 * <p>The files are compared by content, not by modification time: a Kubernetes Secret volume
 * swaps a symbolic link to a new directory, which leaves the links' own times unchanged.
 */
public final class TlsCertificates extends PeriodicTask {

    private static final Logger log = LoggerFactory.getLogger(TlsCertificates.class);

    private final TlsProperties settings;
    private final List<Consumer<TlsMaterial>> listeners = new CopyOnWriteArrayList<>();
    private volatile TlsContexts current;
    /** Why the files were last refused, so that a set left broken is reported once, not every round. */
    private volatile String refusal;

    /** Reads the files; a bad one stops the node ({@link InvalidSettingException}). */
    public TlsCertificates(TlsProperties settings) {
        this.settings = settings;
        this.current = TlsContexts.of(TlsMaterial.parse(TlsMaterial.read(settings)));
        log.info("TLS certificate serial {} (expires {})", current.material().serial().toString(16),
                current.material().chain().getFirst().getNotAfter().toInstant());
    }

    /** The contexts of the files as last read whole. */
    TlsContexts current() {
        return current;
    }

    /** Told each new valid set of files, on the thread that read them. */
    void onChange(Consumer<TlsMaterial> listener) {
        listeners.add(listener);
    }

    @Override
    protected Disposable begin() {
        return everyPeriod(settings.checkInterval(), Schedulers.boundedElastic(), () -> Mono.fromRunnable(this::check),
                error -> log.warn("reading the TLS files failed", error))
                .subscribe();
    }

    /** Reads the files and, if they changed and make a valid set, takes them. */
    void check() {
        TlsMaterial.Pem pem;
        TlsContexts next;
        try {
            pem = TlsMaterial.read(settings);
            if (pem.equals(current.material().pem())) {
                return;
            }
            next = TlsContexts.of(TlsMaterial.parse(pem));
        } catch (InvalidSettingException e) {
            if (!e.getMessage().equals(refusal)) {
                log.warn("the TLS files changed but are not usable; the certificate in use stays: {}", e.getMessage());
            }
            refusal = e.getMessage();
            return;
        }
        refusal = null;
        String before = current.material().serial().toString(16);
        current = next;
        log.info("TLS certificate replaced: serial {} -> {} (expires {})", before, next.material().serial().toString(16),
                next.material().chain().getFirst().getNotAfter().toInstant());
        listeners.forEach(listener -> listener.accept(next.material()));
    }
}
