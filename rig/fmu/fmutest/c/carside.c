/*
 * The car side of paper 001's quarter car, cut at CP2 (the seat on the
 * bench): wheel, suspension and body, driven by the road's velocity v0
 * and the seat's force Fseat. Its states are the tyre's compression z1,
 * the wheel's velocity v1, the suspension's deflection and the body's
 * velocity v2:
 *   z1' = v1 − v0
 *   m1·v1' = −k1·z1 − b1·(v1 − v0) + Fs
 *   deflection' = v2 − v1
 *   m2·v2' = Fseat − Fs,   Fs = k2·deflection + b2·(v2 − v1)
 * One internal step of RK4 a communication step up to 1 ms, so that it
 * steps as hilrig's own rk4 steps the built-in model.
 */
#define TOKEN "{hilrig-test-carside}"
#define NX 4
#define NZ 0
#define INTERNAL_STEP 1e-3

enum { VR_TIME, VR_V0, VR_FSEAT, VR_Z1, VR_V1, VR_DEFL, VR_V2, VR_DZ1, VR_DV1, VR_DDEFL, VR_DV2,
	VR_M1, VR_M2, VR_K1, VR_B1, VR_K2, VR_B2, VR_FS, VR_BODY_A };

static void reset(Instance *m) {
	for (int i = 0; i < NX; i++) m->x[i] = 0;
	m->v[VR_V0] = m->v[VR_FSEAT] = 0;
	m->v[VR_M1] = 110;
	m->v[VR_M2] = 900;
	m->v[VR_K1] = 1e6;
	m->v[VR_B1] = 200e3;
	m->v[VR_K2] = 275e3;
	m->v[VR_B2] = 30e3;
}

static double suspension(Instance *m) {
	return m->v[VR_K2] * m->x[2] + m->v[VR_B2] * (m->x[3] - m->x[1]);
}

static Status derivatives(Instance *m, double dx[]) {
	double *p = m->v, z1 = m->x[0], v1 = m->x[1], v2 = m->x[3], fs = suspension(m);
	dx[0] = v1 - p[VR_V0];
	dx[1] = (-p[VR_K1] * z1 - p[VR_B1] * (v1 - p[VR_V0]) + fs) / p[VR_M1];
	dx[2] = v2 - v1;
	dx[3] = (p[VR_FSEAT] - fs) / p[VR_M2];
	return OK;
}

static int get(Instance *m, unsigned vr, double *out) {
	double dx[NX];
	switch (vr) {
	case VR_TIME: *out = m->time; return 1;
	case VR_Z1: case VR_V1: case VR_DEFL: case VR_V2: *out = m->x[vr - VR_Z1]; return 1;
	case VR_DZ1: case VR_DV1: case VR_DDEFL: case VR_DV2: derivatives(m, dx); *out = dx[vr - VR_DZ1]; return 1;
	case VR_BODY_A: derivatives(m, dx); *out = dx[3]; return 1;
	case VR_FS: *out = suspension(m); return 1;
	case VR_V0: case VR_FSEAT: case VR_M1: case VR_M2: case VR_K1: case VR_B1: case VR_K2: case VR_B2: *out = m->v[vr]; return 1;
	}
	return 0;
}

static int set(Instance *m, unsigned vr, double value) {
	switch (vr) {
	case VR_Z1: case VR_V1: case VR_DEFL: case VR_V2: m->x[vr - VR_Z1] = value; return 1;
	case VR_V0: case VR_FSEAT: case VR_M1: case VR_M2: case VR_K1: case VR_B1: case VR_K2: case VR_B2: m->v[vr] = value; return 1;
	}
	return 0;
}

static void indicators(Instance *m, double z[]) {}
static void update(Instance *m) { m->valuesChanged = false; }
static Status hook(Instance *m, const char *where) { return OK; }
