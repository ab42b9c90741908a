package io.ringkv.tls;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.lifecycle.WatchedFiles;
import io.ringkv.settings.InvalidSettingException;
import reactor.core.scheduler.Schedulers;

/**
 * The node's certificates as the files hold them now, made into TLS contexts. Read once at
 * start, where a missing or broken file stops the node ({@link InvalidSettingException}); then
 * read again every {@code ringkv.tls.check-interval} ({@link WatchedFiles}), and when they
 * changed and make a valid set, made into new contexts: connections opened from then on use
 * them, open ones go on with the ones they started with. Files that do not make a valid set leave
 * the old contexts in place, and the log says why, once per content.
 */
public final class TlsCertificates extends WatchedFiles<TlsMaterial.Pem, TlsContexts> {

    private static final Logger log = LoggerFactory.getLogger(TlsCertificates.class);

    private final TlsProperties settings;
    private final List<Consumer<TlsMaterial>> listeners = new CopyOnWriteArrayList<>();

    /** Reads the files; a bad one stops the node ({@link InvalidSettingException}). */
    public TlsCertificates(TlsProperties settings) {
        super(settings.checkInterval(), Schedulers.boundedElastic());
        this.settings = settings;
        TlsMaterial material = load().material();
        log.info("TLS certificate serial {} (expires {})", material.serial().toString(16),
                material.chain().getFirst().getNotAfter().toInstant());
    }

    /** Told each new valid set of files, on the thread that read them. */
    void onChange(Consumer<TlsMaterial> listener) {
        listeners.add(listener);
    }

    @Override
    protected TlsMaterial.Pem read() {
        return TlsMaterial.read(settings);
    }

    /** The files themselves: the private key is in memory in any case, in the contexts. */
    @Override
    protected Object fingerprint(TlsMaterial.Pem pem) {
        return pem;
    }

    @Override
    protected TlsContexts make(TlsMaterial.Pem pem) {
        return TlsContexts.of(TlsMaterial.parse(pem));
    }

    @Override
    protected void taken(TlsContexts before, TlsContexts after) {
        log.info("TLS certificate replaced: serial {} -> {} (expires {})", before.material().serial().toString(16),
                after.material().serial().toString(16), after.material().chain().getFirst().getNotAfter().toInstant());
        listeners.forEach(listener -> listener.accept(after.material()));
    }

    @Override
    protected void refused(String why, TlsContexts inForce) {
        log.warn("the TLS files changed but are not usable; the certificate in use stays: {}", why);
    }
}
