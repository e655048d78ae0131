/*
 * The FMI 2.0 and 3.0 functions of hilrig's test FMUs, written for hilrig
 * from the signatures the standard publishes; no FMI header is used. One
 * model, #included at the end of the model part below as MODEL_FILE,
 * supplies the equations. Compile with -DFMI_VERSION=2 or 3,
 * -DMODEL_FILE='"ball.c"', and -DOMIT_<function> to leave a function out.
 *
 * Co-Simulation integrates with the classic Runge-Kutta method at the
 * model's INTERNAL_STEP, and handles an event at the end of the internal
 * step where an indicator changed sign or a time event fell: as simple
 * co-simulation FMUs do.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef enum { OK, Warning, Discard, Error, Fatal } Status;
enum { INSTANTIATED, INITIALIZATION, EVENT_MODE, CONTINUOUS_TIME, STEP_MODE, TERMINATED };
enum { KIND_ME, KIND_CS };

#define MAX_X 4
#define MAX_Z 2
#define MAX_V 32

typedef struct Instance {
	char *name;
	int kind;
	int mode;
	double time;
	double x[MAX_X];  /* continuous states */
	double v[MAX_V];  /* every other variable, by value reference */
	bool newEvent;    /* an event mode entered, its discrete update not yet done */
	bool valuesChanged, nextEventDefined, terminate;
	double nextEvent;
#if FMI_VERSION == 2
	void (*logger)(void *env, const char *name, int status, const char *category, const char *message, ...);
	void (*freeMemory)(void *);
#else
	void (*logMessage)(void *env, int status, const char *category, const char *message);
#endif
	void *env;
} Instance;

/* say logs a message, formatted here. */
static void say(Instance *m, Status status, const char *category, const char *format, ...) {
	char buf[1024];
	va_list ap;
	va_start(ap, format);
	vsnprintf(buf, sizeof buf, format, ap);
	va_end(ap);
#if FMI_VERSION == 2
	if (m->logger) m->logger(m->env, m->name, status, category, "%s", buf);
#else
	if (m->logMessage) m->logMessage(m->env, status, category, buf);
#endif
}

/* The model: NX, NZ, INTERNAL_STEP, TOKEN, reset, get, set,
 * derivatives, indicators, update, and hook (the bad model's misdeeds). */
#include MODEL_FILE

/* rk4 takes one internal step of h. */
static Status rk4(Instance *m, double h) {
	double x0[MAX_X], k1[MAX_X], k2[MAX_X], k3[MAX_X], k4[MAX_X];
	double t0 = m->time;
	Status s;
	memcpy(x0, m->x, sizeof x0);
	if ((s = derivatives(m, k1)) > Warning) return s;
	for (int i = 0; i < NX; i++) m->x[i] = x0[i] + h / 2 * k1[i];
	m->time = t0 + h / 2;
	if ((s = derivatives(m, k2)) > Warning) return s;
	for (int i = 0; i < NX; i++) m->x[i] = x0[i] + h / 2 * k2[i];
	if ((s = derivatives(m, k3)) > Warning) return s;
	for (int i = 0; i < NX; i++) m->x[i] = x0[i] + h * k3[i];
	m->time = t0 + h;
	if ((s = derivatives(m, k4)) > Warning) return s;
	for (int i = 0; i < NX; i++) m->x[i] = x0[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
	return OK;
}

/* doStep integrates from t to t + h with internal steps. */
static Status doStep(Instance *m, double t, double h) {
	Status s = hook(m, "doStep");
	if (s > Warning) return s;
	double end = t + h, z0[MAX_Z + 1], z1[MAX_Z + 1];
	indicators(m, z0);
	while (m->time < end - 1e-12 * fmax(1, fabs(end))) {
		if ((s = rk4(m, fmin(INTERNAL_STEP, end - m->time))) > Warning) return s;
		indicators(m, z1);
		bool crossed = false;
		for (int i = 0; i < NZ; i++) crossed |= (z0[i] > 0) != (z1[i] > 0);
		if (crossed || (m->nextEventDefined && m->time >= m->nextEvent - 1e-12)) {
			update(m);
			if (m->terminate) return Discard;
		}
		indicators(m, z0);
	}
	m->time = end;
	return OK;
}

static Status getValues(Instance *m, const unsigned vr[], size_t n, double out[]) {
	for (size_t i = 0; i < n; i++) {
		if (!get(m, vr[i], &out[i])) {
			say(m, Error, "logStatusError", "no variable has the value reference %u", vr[i]);
			return Error;
		}
	}
	return OK;
}

static Status setValue(Instance *m, unsigned vr, double value) {
	if (!set(m, vr, value)) {
		say(m, Error, "logStatusError", "the variable with value reference %u cannot be set", vr);
		return Error;
	}
	return OK;
}

static void start(Instance *m, int kind) {
	m->kind = kind;
	m->mode = INSTANTIATED;
	reset(m);
}

static Status exitInitialization(Instance *m) {
	if (m->kind == KIND_CS) {
		m->mode = STEP_MODE;
		update(m); /* the initial event, which co-simulation handles itself */
	} else {
		m->mode = EVENT_MODE;
		m->newEvent = true;
	}
	return OK;
}

/* newDiscreteStates is one step of event iteration: the model's update
 * once per event. */
static void newDiscreteStates(Instance *m, bool *valuesChanged) {
	if (m->newEvent) {
		update(m);
		m->newEvent = false;
		*valuesChanged = m->valuesChanged;
	} else {
		*valuesChanged = false;
	}
}

#if FMI_VERSION == 2

typedef struct {
	void (*logger)(void *, const char *, int, const char *, const char *, ...);
	void *(*allocateMemory)(size_t, size_t);
	void (*freeMemory)(void *);
	void (*stepFinished)(void *, int);
	void *componentEnvironment;
} CallbackFunctions;

typedef struct {
	int newDiscreteStatesNeeded, terminateSimulation, nominalsOfContinuousStatesChanged, valuesOfContinuousStatesChanged, nextEventTimeDefined;
	double nextEventTime;
} EventInfo;

EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }
EXPORT int fmi2SetDebugLogging(void *c, int on, size_t n, const char *const categories[]) { return OK; }

EXPORT void *fmi2Instantiate(const char *name, int type, const char *guid, const char *resourceLocation,
                             const CallbackFunctions *f, int visible, int loggingOn) {
	if (!f || !f->allocateMemory || !f->freeMemory) return NULL;
	if (!guid || strcmp(guid, TOKEN) != 0) {
		/* Variadic arguments of three kinds, for the importer's formatting. */
		if (f->logger) f->logger(f->componentEnvironment, name, Error, "logStatusError",
		                         "wrong GUID %s: this FMU is %s (%d characters)", guid, TOKEN, (int)strlen(TOKEN));
		return NULL;
	}
	Instance *m = f->allocateMemory(1, sizeof(Instance));
	if (!m) return NULL;
	m->name = f->allocateMemory(strlen(name) + 1, 1);
	strcpy(m->name, name);
	m->logger = f->logger;
	m->freeMemory = f->freeMemory;
	m->env = f->componentEnvironment;
	start(m, type == 1 ? KIND_CS : KIND_ME);
	return m;
}

EXPORT void fmi2FreeInstance(void *c) {
	Instance *m = c;
	if (!m) return;
	void (*freeMemory)(void *) = m->freeMemory;
	freeMemory(m->name);
	freeMemory(m);
}

EXPORT int fmi2SetupExperiment(void *c, int toleranceDefined, double tolerance, double startTime, int stopTimeDefined, double stopTime) {
	((Instance *)c)->time = startTime;
	return OK;
}

EXPORT int fmi2EnterInitializationMode(void *c) { ((Instance *)c)->mode = INITIALIZATION; return OK; }
EXPORT int fmi2ExitInitializationMode(void *c) { return exitInitialization(c); }
EXPORT int fmi2Terminate(void *c) { ((Instance *)c)->mode = TERMINATED; return OK; }
EXPORT int fmi2Reset(void *c) { start(c, ((Instance *)c)->kind); return OK; }

EXPORT int fmi2GetReal(void *c, const unsigned vr[], size_t n, double value[]) { return getValues(c, vr, n, value); }

EXPORT int fmi2GetInteger(void *c, const unsigned vr[], size_t n, int value[]) {
	for (size_t i = 0; i < n; i++) {
		double d;
		Status s = getValues(c, &vr[i], 1, &d);
		if (s != OK) return s;
		value[i] = (int)d;
	}
	return OK;
}

EXPORT int fmi2GetBoolean(void *c, const unsigned vr[], size_t n, int value[]) { return fmi2GetInteger(c, vr, n, value); }

EXPORT int fmi2GetString(void *c, const unsigned vr[], size_t n, const char *value[]) { return Error; }

EXPORT int fmi2SetReal(void *c, const unsigned vr[], size_t n, const double value[]) {
	for (size_t i = 0; i < n; i++)
		if (setValue(c, vr[i], value[i]) != OK) return Error;
	return OK;
}

EXPORT int fmi2SetInteger(void *c, const unsigned vr[], size_t n, const int value[]) {
	for (size_t i = 0; i < n; i++)
		if (setValue(c, vr[i], value[i]) != OK) return Error;
	return OK;
}

EXPORT int fmi2SetBoolean(void *c, const unsigned vr[], size_t n, const int value[]) { return fmi2SetInteger(c, vr, n, value); }
EXPORT int fmi2SetString(void *c, const unsigned vr[], size_t n, const char *const value[]) { return Error; }

#ifndef OMIT_fmi2DoStep
EXPORT int fmi2DoStep(void *c, double t, double h, int noSetFMUStatePriorToCurrentPoint) { return doStep(c, t, h); }
#endif

EXPORT int fmi2CancelStep(void *c) { return Error; }

EXPORT int fmi2GetRealStatus(void *c, int kind, double *value) {
	if (kind != 2) return Discard; /* fmi2LastSuccessfulTime only */
	*value = ((Instance *)c)->time;
	return OK;
}

EXPORT int fmi2GetBooleanStatus(void *c, int kind, int *value) {
	if (kind != 3) return Discard; /* fmi2Terminated only */
	*value = ((Instance *)c)->terminate;
	return OK;
}

EXPORT int fmi2EnterEventMode(void *c) {
	Instance *m = c;
	m->mode = EVENT_MODE;
	m->newEvent = true;
	return OK;
}

EXPORT int fmi2NewDiscreteStates(void *c, EventInfo *info) {
	Instance *m = c;
	bool changed;
	newDiscreteStates(m, &changed);
	info->newDiscreteStatesNeeded = 0;
	info->terminateSimulation = m->terminate;
	info->nominalsOfContinuousStatesChanged = 0;
	info->valuesOfContinuousStatesChanged = changed;
	info->nextEventTimeDefined = m->nextEventDefined;
	info->nextEventTime = m->nextEvent;
	return OK;
}

EXPORT int fmi2EnterContinuousTimeMode(void *c) { ((Instance *)c)->mode = CONTINUOUS_TIME; return OK; }

EXPORT int fmi2CompletedIntegratorStep(void *c, int noSetFMUStatePriorToCurrentPoint, int *enterEventMode, int *terminateSimulation) {
	*enterEventMode = 0;
	*terminateSimulation = 0;
	return OK;
}

EXPORT int fmi2SetTime(void *c, double t) { ((Instance *)c)->time = t; return OK; }

EXPORT int fmi2SetContinuousStates(void *c, const double x[], size_t nx) {
	memcpy(((Instance *)c)->x, x, nx * sizeof(double));
	return OK;
}

EXPORT int fmi2GetContinuousStates(void *c, double x[], size_t nx) {
	memcpy(x, ((Instance *)c)->x, nx * sizeof(double));
	return OK;
}

#ifndef OMIT_fmi2GetDerivatives
EXPORT int fmi2GetDerivatives(void *c, double dx[], size_t nx) {
	Status s = hook(c, "fmi2GetDerivatives");
	return s > Warning ? s : derivatives(c, dx);
}
#endif

EXPORT int fmi2GetEventIndicators(void *c, double z[], size_t nz) { indicators(c, z); return OK; }

EXPORT int fmi2GetNominalsOfContinuousStates(void *c, double nominals[], size_t nx) {
	for (size_t i = 0; i < nx; i++) nominals[i] = 1;
	return OK;
}

#else /* FMI 3 */

EXPORT const char *fmi3GetVersion(void) { return "3.0"; }
EXPORT int fmi3SetDebugLogging(void *c, bool on, size_t n, const char *const categories[]) { return OK; }

static Instance *instantiate(const char *name, const char *token, void *env,
                             void (*logMessage)(void *, int, const char *, const char *), int kind) {
	if (!token || strcmp(token, TOKEN) != 0) {
		char buf[256];
		snprintf(buf, sizeof buf, "wrong instantiationToken %s: this FMU is %s", token ? token : "(null)", TOKEN);
		if (logMessage) logMessage(env, Error, "logStatusError", buf);
		return NULL;
	}
	Instance *m = calloc(1, sizeof(Instance));
	if (!m) return NULL;
	m->name = malloc(strlen(name) + 1);
	if (!m->name) {
		free(m);
		return NULL;
	}
	strcpy(m->name, name);
	m->logMessage = logMessage;
	m->env = env;
	start(m, kind);
	return m;
}

EXPORT void *fmi3InstantiateModelExchange(const char *name, const char *token, const char *resourcePath, bool visible, bool loggingOn,
                                          void *env, void (*logMessage)(void *, int, const char *, const char *)) {
	return instantiate(name, token, env, logMessage, KIND_ME);
}

EXPORT void *fmi3InstantiateCoSimulation(const char *name, const char *token, const char *resourcePath, bool visible, bool loggingOn,
                                         bool eventModeUsed, bool earlyReturnAllowed, const unsigned requiredIntermediateVariables[],
                                         size_t nRequiredIntermediateVariables, void *env,
                                         void (*logMessage)(void *, int, const char *, const char *), void *intermediateUpdate) {
	return instantiate(name, token, env, logMessage, KIND_CS);
}

EXPORT void fmi3FreeInstance(void *c) {
	Instance *m = c;
	if (!m) return;
	free(m->name);
	free(m);
}

EXPORT int fmi3EnterInitializationMode(void *c, bool toleranceDefined, double tolerance, double startTime, bool stopTimeDefined, double stopTime) {
	Instance *m = c;
	m->time = startTime;
	m->mode = INITIALIZATION;
	return OK;
}

EXPORT int fmi3ExitInitializationMode(void *c) { return exitInitialization(c); }
EXPORT int fmi3Terminate(void *c) { ((Instance *)c)->mode = TERMINATED; return OK; }
EXPORT int fmi3Reset(void *c) { start(c, ((Instance *)c)->kind); return OK; }

EXPORT int fmi3GetFloat64(void *c, const unsigned vr[], size_t n, double value[], size_t nValues) { return getValues(c, vr, n, value); }

EXPORT int fmi3GetInt32(void *c, const unsigned vr[], size_t n, int value[], size_t nValues) {
	for (size_t i = 0; i < n; i++) {
		double d;
		if (getValues(c, &vr[i], 1, &d) != OK) return Error;
		value[i] = (int)d;
	}
	return OK;
}

EXPORT int fmi3GetBoolean(void *c, const unsigned vr[], size_t n, bool value[], size_t nValues) {
	for (size_t i = 0; i < n; i++) {
		double d;
		if (getValues(c, &vr[i], 1, &d) != OK) return Error;
		value[i] = d != 0;
	}
	return OK;
}

EXPORT int fmi3SetFloat64(void *c, const unsigned vr[], size_t n, const double value[], size_t nValues) {
	for (size_t i = 0; i < n; i++)
		if (setValue(c, vr[i], value[i]) != OK) return Error;
	return OK;
}

EXPORT int fmi3SetInt32(void *c, const unsigned vr[], size_t n, const int value[], size_t nValues) {
	for (size_t i = 0; i < n; i++)
		if (setValue(c, vr[i], value[i]) != OK) return Error;
	return OK;
}

EXPORT int fmi3SetBoolean(void *c, const unsigned vr[], size_t n, const bool value[], size_t nValues) {
	for (size_t i = 0; i < n; i++)
		if (setValue(c, vr[i], value[i]) != OK) return Error;
	return OK;
}

#ifndef OMIT_fmi3DoStep
EXPORT int fmi3DoStep(void *c, double t, double h, bool noSetFMUStatePriorToCurrentPoint,
                      bool *eventHandlingNeeded, bool *terminateSimulation, bool *earlyReturn, double *lastSuccessfulTime) {
	Instance *m = c;
	Status s = doStep(m, t, h);
	*eventHandlingNeeded = false;
	*terminateSimulation = m->terminate;
	*earlyReturn = false;
	*lastSuccessfulTime = m->time;
	return s;
}
#endif

EXPORT int fmi3EnterEventMode(void *c) {
	Instance *m = c;
	m->mode = EVENT_MODE;
	m->newEvent = true;
	return OK;
}

EXPORT int fmi3UpdateDiscreteStates(void *c, bool *discreteStatesNeedUpdate, bool *terminateSimulation, bool *nominalsChanged,
                                    bool *valuesChanged, bool *nextEventTimeDefined, double *nextEventTime) {
	Instance *m = c;
	newDiscreteStates(m, valuesChanged);
	*discreteStatesNeedUpdate = false;
	*terminateSimulation = m->terminate;
	*nominalsChanged = false;
	*nextEventTimeDefined = m->nextEventDefined;
	*nextEventTime = m->nextEvent;
	return OK;
}

EXPORT int fmi3EnterContinuousTimeMode(void *c) { ((Instance *)c)->mode = CONTINUOUS_TIME; return OK; }

EXPORT int fmi3CompletedIntegratorStep(void *c, bool noSetFMUStatePriorToCurrentPoint, bool *enterEventMode, bool *terminateSimulation) {
	*enterEventMode = false;
	*terminateSimulation = false;
	return OK;
}

EXPORT int fmi3SetTime(void *c, double t) { ((Instance *)c)->time = t; return OK; }

EXPORT int fmi3SetContinuousStates(void *c, const double x[], size_t nx) {
	memcpy(((Instance *)c)->x, x, nx * sizeof(double));
	return OK;
}

EXPORT int fmi3GetContinuousStates(void *c, double x[], size_t nx) {
	memcpy(x, ((Instance *)c)->x, nx * sizeof(double));
	return OK;
}

EXPORT int fmi3GetContinuousStateDerivatives(void *c, double dx[], size_t nx) {
	Status s = hook(c, "fmi3GetContinuousStateDerivatives");
	return s > Warning ? s : derivatives(c, dx);
}

EXPORT int fmi3GetEventIndicators(void *c, double z[], size_t nz) { indicators(c, z); return OK; }

EXPORT int fmi3GetNominalsOfContinuousStates(void *c, double nominals[], size_t nx) {
	for (size_t i = 0; i < nx; i++) nominals[i] = 1;
	return OK;
}

EXPORT int fmi3GetNumberOfEventIndicators(void *c, size_t *n) { *n = NZ; return OK; }
EXPORT int fmi3GetNumberOfContinuousStates(void *c, size_t *n) { *n = NX; return OK; }

#endif
